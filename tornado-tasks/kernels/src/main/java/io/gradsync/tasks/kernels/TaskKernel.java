package io.gradsync.tasks.kernels;

import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.DoubleArray;
import io.gradsync.tasks.api.FloatArray;
import io.gradsync.tasks.api.HalfArray;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.KernelContext;
import io.gradsync.tasks.api.LongArray;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.ir.ElementKind;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.compiler.ir.KernelParam;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

/**
 * A task's kernel as a plan needs it: compiled, or, where the compiler rejects it, its Java
 * method alone, which JVM devices run as plain Java (as TornadoVM falls back to Java). A
 * rejected kernel's parameters come from its signature, and every array it takes counts as
 * written, since nothing says otherwise.
 */
record TaskKernel(Method method, CompiledKernel compiled, KernelCompileException rejection, List<KernelParam> params) {

    static TaskKernel of(Method m) {
        try {
            CompiledKernel k = KernelCompiler.shared().compile(m);
            return new TaskKernel(m, k, null, KernelIrs.parameters(k));
        } catch (KernelCompileException e) {
            return new TaskKernel(m, null, e, fromSignature(m));
        }
    }

    boolean writes(String arrayName) {
        return compiled == null || KernelIrs.ir(compiled).writtenArrays().contains(arrayName);
    }

    KernelStyle style() {
        if (compiled != null) {
            return compiled.style();
        }
        return params.stream().anyMatch(p -> p instanceof KernelParam.ContextParam) ? KernelStyle.CONTEXT : KernelStyle.SERIAL;
    }

    private static List<KernelParam> fromSignature(Method m) {
        List<KernelParam> params = new ArrayList<>();
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < types.length; i++) {
            Class<?> t = types[i];
            String name = "p" + i;
            ElementKind kind = t == FloatArray.class ? ElementKind.F32 : t == DoubleArray.class ? ElementKind.F64
                    : t == IntArray.class ? ElementKind.I32 : t == LongArray.class ? ElementKind.I64
                    : t == HalfArray.class ? ElementKind.F16 : t == Bfloat16Array.class ? ElementKind.BF16 : null;
            if (kind != null) {
                params.add(new KernelParam.ArrayParam(name, i, kind));
            } else if (t == KernelContext.class) {
                params.add(new KernelParam.ContextParam(name, i));
            } else {
                IrType type = t == long.class ? IrType.I64 : t == float.class ? IrType.F32 : t == double.class ? IrType.F64 : IrType.I32;
                params.add(new KernelParam.ScalarParam(name, i, type, null));
            }
        }
        return List.copyOf(params);
    }
}
