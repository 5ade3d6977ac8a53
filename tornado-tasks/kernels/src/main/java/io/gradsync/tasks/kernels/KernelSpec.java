package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompileException;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.KernelStyle;
import io.gradsync.tasks.compiler.LaunchShape;

import java.lang.reflect.Method;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;

/**
 * One kernel: its device name, the Java method, how it spreads work, and the forms it comes in
 * ({@link #forms()}): the Java method itself, the compiled device kernel, and for a built-in kernel
 * its JVM fast form and its CUDA C reference where it has them. Tests and benchmarks loop over
 * {@link BuiltinKernels#all()} and these forms rather than lists of their own.
 *
 * <p>Immutable: safe to share between threads.
 *
 * @param name   entry / kernel name on the device (the Java method name)
 * @param method the static Java method, also the JVM implementation
 * @param style  how to launch it
 * @param maxThreads the most threads worth launching (0: one per element); grid-stride
 *                   reductions that add one partial per thread atomically are bounded
 */
public record KernelSpec(String name, Method method, KernelStyle style, int maxThreads) {

    /** The forms a kernel comes in, each checked against {@link #JAVA}. */
    public enum Form {
        /** The Java method as written: the reference ({@code JvmKernels.runAsWritten}). */
        JAVA,
        /** The compiled kernel, PTX and OpenCL C ({@link #compile()}). */
        DEVICE,
        /** The JVM fast form ({@link #jvmFastForm()}). */
        JVM_FAST,
        /** The CUDA C reference, built by nvcc ({@link #cudaReference()}). */
        CUDA_REFERENCE
    }

    /**
     * The CUDA C reference of a built-in kernel: the kernel named {@code name} (the same name and
     * calling convention as the generated PTX) in {@code family}'s CUDA C source.
     */
    public record CudaReference(String name, KernelFamily family) {
        /** The family's CUDA C source that defines this kernel (it needs {@link KernelFamily#cudaCommon()} first). */
        public String source() {
            return family.cudaSource();
        }
    }

    /** The launch for {@code workItems} elements (the first array's length). */
    public LaunchShape launchShape(long workItems) {
        return LaunchShape.forWork(style, workItems, maxThreads);
    }

    /** Compiles (or fetches from the shared cache) this kernel. */
    public CompiledKernel compile() {
        return KernelCompiler.shared().compile(method);
    }

    /** The built-in family this kernel belongs to; empty for a user's kernel. */
    public Optional<KernelFamily> family() {
        return KernelFamily.of(method.getDeclaringClass());
    }

    /** The JVM fast form that JVM devices run instead of the method; empty where there is none. */
    public Optional<JvmFastForm> jvmFastForm() {
        return JvmFastForms.of(method);
    }

    /** The CUDA C reference of this kernel; empty where there is none (every kernel not built in). */
    public Optional<CudaReference> cudaReference() {
        return family().map(f -> new CudaReference(name, f));
    }

    /** The forms this kernel comes in: always {@link Form#JAVA}; {@link Form#DEVICE} where it compiles. */
    public Set<Form> forms() {
        Set<Form> forms = EnumSet.of(Form.JAVA);
        try {
            compile();
            forms.add(Form.DEVICE);
        } catch (KernelCompileException e) {
            // a kernel the compiler rejects runs as Java on JVM devices only
        }
        if (jvmFastForm().isPresent()) {
            forms.add(Form.JVM_FAST);
        }
        if (cudaReference().isPresent()) {
            forms.add(Form.CUDA_REFERENCE);
        }
        return Set.copyOf(forms);
    }
}
