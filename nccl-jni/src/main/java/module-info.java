/** The JNI binding of NCCL that the nccl backend uses; not an API of its own. */
@SuppressWarnings("module") // the modules named in "exports ... to" are built after this one
module io.gradsync.nccl {
    exports io.gradsync.nccl to io.gradsync.sync, io.gradsync.bench; // the bench reports whether NCCL loads
}
