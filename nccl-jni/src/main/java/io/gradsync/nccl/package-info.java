/**
 * A thin Java binding over NCCL through a small JNI shim ({@code src/main/c/gradsync_nccl.c}).
 *
 * <p><b>Loading.</b> The Maven build compiles the shim with gcc alone (no CUDA or NCCL
 * headers) into {@code native/linux-x86_64/libgradsync_nccl.so} inside the jar. On first use
 * {@link io.gradsync.nccl.Nccl} copies it to a temp file and {@code System.load}s it (once,
 * thread-safe), and the shim dlopens NCCL: {@code -Dgradsync.nccl.library}, else
 * {@code $GRADSYNC_NCCL_LIBRARY}, else {@code libnccl.so.2} on the default search path.
 * {@link io.gradsync.nccl.Nccl#availability()} reports the outcome and never throws. NCCL
 * functions missing from an older library fail with {@link io.gradsync.nccl.NcclException}
 * when called. {@code libcuda.so.1} is opened only by
 * {@link io.gradsync.nccl.Nccl#initRank}, to make the device's primary context current.
 *
 * <p><b>Typical single-process use.</b>
 * <pre>{@code
 * List<NcclComm> comms = Nccl.initAll(0, 1, 2, 3);
 * try {
 *     Nccl.groupStart();
 *     try {
 *         for (int r = 0; r < comms.size(); r++) {
 *             comms.get(r).allReduceInPlace(grad[r], count, NcclDataType.FLOAT32, NcclRedOp.AVG, stream[r]);
 *         }
 *     } finally {
 *         Nccl.groupEnd();
 *     }
 *     // synchronise each stream before reading the result
 * } finally {
 *     Nccl.closeAll(comms);
 * }
 * }</pre>
 *
 * <p><b>GPU node.</b> Keep {@code NCCL_NVLS_ENABLE=0} in the environment of every process
 * that uses NCCL there (NVLink multicast must stay off); run the JVM with
 * {@code --enable-native-access=ALL-UNNAMED}. The {@code gpu}-tagged tests
 * ({@code NcclGpuTest}) run there with the JUnit console launcher and
 * {@code --include-tag gpu}, or {@code mvn -Pgpu test}.
 */
package io.gradsync.nccl;
