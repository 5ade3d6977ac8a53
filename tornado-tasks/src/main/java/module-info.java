/**
 * Devices (JVM, CUDA, OpenCL), the kernel API, the kernel compiler's entry points and the built-in
 * kernels. Exported: what users program against. Not exported: the compiler's IR and emitters, and
 * the JCuda / JOCL handles behind the device types (reached by gradsync's own modules only), so
 * a user compiles against gradsync alone.
 *
 * <p>Kernels in a named module of yours: {@code opens} their package to {@code io.gradsync.tasks},
 * which reads their constants and resolves kernel method references reflectively.
 */
module io.gradsync.tasks {
    requires jcuda;
    requires jocl;
    requires jdk.management; // the host's physical memory (HostMemory)

    exports io.gradsync.tasks;
    exports io.gradsync.tasks.api;
    exports io.gradsync.tasks.compiler;
    exports io.gradsync.tasks.device;
    exports io.gradsync.tasks.cuda;
    exports io.gradsync.tasks.jvm;
    exports io.gradsync.tasks.opencl;
    exports io.gradsync.tasks.kernels;

    exports io.gradsync.tasks.cuda.driver to io.gradsync.sync;
    exports io.gradsync.tasks.opencl.driver to io.gradsync.sync;
    exports io.gradsync.tasks.kernels.launch to io.gradsync.sync;
    // io.gradsync.tasks.internal: how this module's packages reach each other's internals; not exported
}
