/** The JNI binding of NCCL that the nccl backend uses; not an API of its own. */
module io.gradsync.nccl {
    exports io.gradsync.nccl to io.gradsync.sync;
}
