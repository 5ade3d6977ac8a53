/**
 * Kernels from bytecode to an IR, and from the IR to PTX and OpenCL C as text. Knows no device: no
 * JCuda, no JOCL (the build enforces it). Exported: {@code KernelCompiler} and {@code CompiledKernel};
 * the IR only to the module that launches kernels; the emitters not at all.
 */
@SuppressWarnings("module") // the modules named in "exports ... to" are built after this one
module io.gradsync.tasks.compiler {
    requires transitive io.gradsync.tasks.api;

    exports io.gradsync.tasks.compiler;
    exports io.gradsync.tasks.compiler.ir to io.gradsync.tasks.kernels, io.gradsync.bench;
    exports io.gradsync.tasks.compiler.access to io.gradsync.tasks.kernels, io.gradsync.bench;
    exports io.gradsync.tasks.compiler.optimize to io.gradsync.tasks.kernels;
}
