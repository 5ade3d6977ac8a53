package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.compiler.KernelStyle;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.stream.IntStream;

/**
 * Runs kernels as the plain Java they are. A {@code @Parallel}-loop or serial kernel is called
 * once (split the arrays with {@code FloatArray.wrap(segment.asSlice(..))} to spread an
 * element-wise kernel over threads); a KernelContext kernel is called once per global index,
 * the index space spread over the common pool, one context per worker.
 */
public final class JvmKernels {
    private JvmKernels() {
    }

    /**
     * Runs {@code spec} with {@code args}, one per Java parameter (KernelContext excluded),
     * as a launch of {@code globalSize} threads in groups of {@code localSize}.
     */
    public static void run(KernelSpec spec, long globalSize, int localSize, Object... args) {
        Method m = spec.method();
        int ctxIndex = -1;
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            if (types[i] == KernelContext.class) {
                ctxIndex = i;
            }
        }
        if (args.length != types.length - (ctxIndex >= 0 ? 1 : 0)) {
            throw new IllegalArgumentException(spec.name() + " takes " + (types.length - (ctxIndex >= 0 ? 1 : 0)) + " arguments, got " + args.length);
        }
        if (spec.style() != KernelStyle.CONTEXT) {
            invoke(m, args);
            return;
        }
        int global = Math.toIntExact(globalSize);
        int workers = Math.max(1, Math.min(Runtime.getRuntime().availableProcessors(), global / 1024 + 1));
        int at = ctxIndex;
        IntStream.range(0, workers).parallel().forEach(w -> {
            KernelContext ctx = new KernelContext(global, localSize);
            Object[] full = new Object[types.length];
            for (int i = 0, j = 0; i < types.length; i++) {
                full[i] = i == at ? ctx : args[j++];
            }
            long from = (long) global * w / workers;
            long to = (long) global * (w + 1) / workers;
            for (int g = (int) from; g < to; g++) {
                ctx.moveTo(g);
                invoke(m, full);
            }
        });
    }

    private static void invoke(Method m, Object[] args) {
        try {
            m.invoke(null, args);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
