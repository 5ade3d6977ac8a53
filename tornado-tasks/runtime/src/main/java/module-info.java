/**
 * Devices: JVM devices, CUDA GPUs (JCuda's driver API) and OpenCL devices (JOCL), with their
 * buffers, streams, events and host flags, and {@code DeviceCatalog}. Knows no compiler. No JCuda
 * or JOCL type appears in an exported signature; the handles behind the device types reach
 * gradsync's own modules only.
 */
// requires-automatic: JCuda and JOCL publish no module descriptor of their own;
// module: the modules named in "exports ... to" are built after this one
@SuppressWarnings({"requires-automatic", "module"})
module io.gradsync.tasks.runtime {
    requires io.gradsync.tasks.api; // its internal package: how the drivers' handles are reached
    requires jcuda;
    requires jocl;
    requires jdk.management; // the host's physical memory (HostMemory)

    exports io.gradsync.tasks;
    exports io.gradsync.tasks.device;
    exports io.gradsync.tasks.cuda;
    exports io.gradsync.tasks.jvm;
    exports io.gradsync.tasks.opencl;

    exports io.gradsync.tasks.cuda.driver to io.gradsync.tasks.kernels, io.gradsync.sync, io.gradsync.bench;
    exports io.gradsync.tasks.opencl.driver to io.gradsync.tasks.kernels;
}
