/**
 * The product API: backends parsed from strings, synchronizers, buckets and overlapped sync, and
 * the rendezvous settings of multi-process jobs. Devices, the kernel API and the built-in kernels
 * come with it ({@code requires transitive}).
 */
// requires-automatic: JCuda publishes no module descriptor of its own;
// module: the bench, named in "exports ... to", is built after this module
@SuppressWarnings({"requires-automatic", "module"})
module io.gradsync.sync {
    requires transitive io.gradsync.tasks.kernels;
    requires io.gradsync.nccl;
    requires jcuda;

    exports io.gradsync.sync;
    exports io.gradsync.sync.bucket;
    exports io.gradsync.sync.nccl;
    exports io.gradsync.sync.verify to io.gradsync.bench; // the bench's and the soak's checks against float64
    exports io.gradsync.sync.backend to io.gradsync.bench; // the bench, the CLI and the soak iterate over the providers
    opens io.gradsync.sync.bucket to io.gradsync.tasks.api; // its kernels (clipping, norms) are read reflectively
}
