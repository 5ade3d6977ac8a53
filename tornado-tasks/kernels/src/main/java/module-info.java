/**
 * The built-in kernels, task graphs run on devices ({@code ExecutionPlan}), and compiled kernels
 * launched on CUDA and OpenCL devices or run as Java on JVM devices. Brings the kernel API, the
 * compiler and the devices along ({@code requires transitive}).
 */
// requires-automatic: JCuda and JOCL publish no module descriptor of their own;
// module: the modules named in "exports ... to" are built after this one
@SuppressWarnings({"requires-automatic", "module"})
module io.gradsync.tasks.kernels {
    requires transitive io.gradsync.tasks.api;
    requires transitive io.gradsync.tasks.compiler;
    requires transitive io.gradsync.tasks.runtime;
    requires jcuda;
    requires jocl;
    requires static jdk.incubator.vector; // the averages' SIMD lanes, where the JVM adds the module (internal.Lanes)

    exports io.gradsync.tasks.kernels;
    exports io.gradsync.tasks.kernels.launch to io.gradsync.sync, io.gradsync.bench;
    // JvmKernels: the bench times kernels on the JVM as plans run them, sync's tests replay schedules with it
    exports io.gradsync.tasks.kernels.internal to io.gradsync.sync, io.gradsync.bench;
    opens io.gradsync.tasks.kernels to io.gradsync.tasks.api; // the built-in kernels are read as users' are
}
