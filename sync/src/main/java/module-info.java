/**
 * The product API: backends parsed from strings, synchronizers, buckets and overlapped sync, and
 * the rendezvous settings of multi-process jobs. Devices, the kernel API and the built-in kernels
 * come with it ({@code requires transitive}).
 */
@SuppressWarnings("requires-automatic") // JCuda and JOCL publish no module descriptor of their own
module io.gradsync.sync {
    requires transitive io.gradsync.tasks.kernels;
    requires io.gradsync.nccl;
    requires jcuda;

    exports io.gradsync.sync;
    exports io.gradsync.sync.bucket;
    exports io.gradsync.sync.nccl;
    opens io.gradsync.sync.bucket to io.gradsync.tasks.api; // its kernels (clipping, norms) are read reflectively
}
