package io.gradsync.sync;

import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of the synchronizers: one record per backend, each read only by its backend, beside the
 * options every backend reads. The accessors and {@code with...} methods of the single fields
 * ({@link #chunkBytes()}, {@link #withTimeout} ...) reach into the backend's record, as they did
 * when this record held every field itself.
 *
 * @param cpu           cpu: chunks, slots and host threads ({@link CpuOptions})
 * @param ptx           ptx: one-shot threshold and peer access ({@link PtxOptions})
 * @param openCl        opencl: the pipeline step ({@link OpenClOptions})
 * @param nccl          nccl: timeout and layout check ({@link NcclOptions})
 * @param waitForCaller every backend: before averaging, wait for all work queued on the devices
 *                    (one device-wide wait per device and call), so that work still writing the
 *                    gradients finishes first. Off only where the caller knows its device work is
 *                    done, e.g. after {@code ExecutionPlan.execute}, which returns once its device
 *                    work has finished: it saves that wait (several microseconds per GPU), which
 *                    dominates small calls
 * @param wire          every backend: the type fp32 gradients cross between replicas as, for the
 *                      average and the reduce-scatter ({@code BF16} or {@code FP16} halves the bytes, as
 *                      PyTorch DDP's compress hooks do); {@code FP32}, the default, sends them as they
 *                      are. 16-bit gradients, all-gathers and broadcasts always go as they are. See
 *                      {@link #withWire}
 *
 * <p>Thread-safety: immutable (every {@code with...} returns a new record); share it freely.
 */
public record SyncOptions(CpuOptions cpu, PtxOptions ptx, OpenClOptions openCl, NcclOptions nccl, boolean waitForCaller, DType wire) {

    /** Default of {@link #openClStepBytes()}: {@link OpenClOptions#DEFAULT_STEP_BYTES}. */
    public static final long DEFAULT_OPENCL_STEP_BYTES = OpenClOptions.DEFAULT_STEP_BYTES;

    /** Default of {@link #timeout()}: {@link NcclOptions#DEFAULT_TIMEOUT}. */
    public static final Duration DEFAULT_TIMEOUT = NcclOptions.DEFAULT_TIMEOUT;

    /**
     * When ranks of a multi-process synchronizer compare their gradient layouts, and which collective
     * they call (a broadcast's root too), before a collective.
     */
    public enum LayoutCheck {
        /** Before every collective: one tiny extra all-reduce per call; a mismatch always fails clearly. */
        EVERY_CALL,
        /**
         * Only when this rank's layout (or broadcast root) differs from the one last agreed on for
         * the same collective: no extra collective in a steady training loop, one that alternates
         * reduce-scatter and all-gather included. A rank whose layout or collective changes alone
         * leaves the others in a mismatched collective, which then fails by
         * {@link NcclOptions#timeout()} (or, for two collectives agreed on before, moves the wrong data)
         * rather than with a message naming the mismatch.
         */
        ON_CHANGE
    }

    /** Every backend's defaults ({@link CpuOptions#defaults()} ...), waiting for the caller's work. */
    public static SyncOptions defaults() {
        return new SyncOptions(CpuOptions.defaults(), PtxOptions.defaults(), OpenClOptions.defaults(), NcclOptions.defaults(), true);
    }

    public SyncOptions {
        Objects.requireNonNull(cpu, "cpu");
        Objects.requireNonNull(ptx, "ptx");
        Objects.requireNonNull(openCl, "openCl");
        Objects.requireNonNull(nccl, "nccl");
        Objects.requireNonNull(wire, "wire (DType.FP32 sends fp32 gradients as they are)");
    }

    /** Every backend's record and {@code waitForCaller}, fp32 gradients sent as they are. */
    public SyncOptions(CpuOptions cpu, PtxOptions ptx, OpenClOptions openCl, NcclOptions nccl, boolean waitForCaller) {
        this(cpu, ptx, openCl, nccl, waitForCaller, DType.FP32);
    }

    /**
     * Every field given singly, as this record's components were before each backend had its own
     * record; checked in the order they always were.
     */
    public SyncOptions(long chunkBytes, int slots, int threads, Duration timeout, LayoutCheck layoutCheck,
            PtxOptions ptx, long openClStepBytes, boolean waitForCaller) {
        CpuOptions cpu = new CpuOptions(chunkBytes, slots, threads);
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(layoutCheck, "layoutCheck");
        Objects.requireNonNull(ptx, "ptx");
        OpenClOptions openCl = new OpenClOptions(openClStepBytes);
        this(cpu, ptx, openCl, new NcclOptions(timeout, layoutCheck), waitForCaller);
    }

    /** Everything but the ptx options, which take their defaults. */
    public SyncOptions(long chunkBytes, int slots, int threads, Duration timeout, LayoutCheck layoutCheck) {
        this(chunkBytes, slots, threads, timeout, layoutCheck, PtxOptions.defaults(), DEFAULT_OPENCL_STEP_BYTES, true);
    }

    /** The host-staging options with the default timeout and layout check. */
    public SyncOptions(long chunkBytes, int slots, int threads) {
        this(chunkBytes, slots, threads, DEFAULT_TIMEOUT, LayoutCheck.EVERY_CALL);
    }

    /** These options with the cpu backend's replaced. */
    public SyncOptions withCpu(CpuOptions options) {
        return new SyncOptions(options, ptx, openCl, nccl, waitForCaller, wire);
    }

    /** The ptx backend's options; the bench sweeps {@link PtxOptions#oneShotMaxBytes()} through this. */
    public SyncOptions withPtx(PtxOptions options) {
        return new SyncOptions(cpu, options, openCl, nccl, waitForCaller, wire);
    }

    /** These options with the opencl backend's replaced. */
    public SyncOptions withOpenCl(OpenClOptions options) {
        return new SyncOptions(cpu, ptx, options, nccl, waitForCaller, wire);
    }

    /** These options with the nccl backend's replaced. */
    public SyncOptions withNccl(NcclOptions options) {
        return new SyncOptions(cpu, ptx, openCl, options, waitForCaller, wire);
    }

    /** See {@link #waitForCaller()}. */
    public SyncOptions withWaitForCaller(boolean wait) {
        return new SyncOptions(cpu, ptx, openCl, nccl, wait, wire);
    }

    /**
     * fp32 gradients cross between replicas as {@code type} values: each replica's value rounded to
     * it (to nearest even), the rounded values averaged as gradients of that type are (on
     * {@code cpu}, {@code ptx} and {@code opencl}: summed in float64 in replica order, divided by
     * the replica count, rounded once to {@code type}; the same bits on all three), and the average
     * widened back into the fp32 gradient exactly. {@code nccl} averages the rounded values as NCCL
     * does in that type. {@code FP32} turns it off.
     */
    public SyncOptions withWire(DType type) {
        return new SyncOptions(cpu, ptx, openCl, nccl, waitForCaller, type);
    }

    /** {@link CpuOptions#chunkBytes()}. */
    public long chunkBytes() {
        return cpu.chunkBytes();
    }

    /** {@link CpuOptions#slots()}. */
    public int slots() {
        return cpu.slots();
    }

    /** {@link CpuOptions#threads()}. */
    public int threads() {
        return cpu.threads();
    }

    /** {@link NcclOptions#timeout()}. */
    public Duration timeout() {
        return nccl.timeout();
    }

    /** {@link NcclOptions#layoutCheck()}. */
    public LayoutCheck layoutCheck() {
        return nccl.layoutCheck();
    }

    /** {@link OpenClOptions#stepBytes()}. */
    public long openClStepBytes() {
        return openCl.stepBytes();
    }

    public SyncOptions withChunkBytes(long bytes) {
        return withCpu(cpu.withChunkBytes(bytes));
    }

    public SyncOptions withSlots(int count) {
        return withCpu(cpu.withSlots(count));
    }

    public SyncOptions withThreads(int count) {
        return withCpu(cpu.withThreads(count));
    }

    public SyncOptions withTimeout(Duration limit) {
        return withNccl(nccl.withTimeout(limit));
    }

    public SyncOptions withLayoutCheck(LayoutCheck check) {
        return withNccl(nccl.withLayoutCheck(check));
    }

    public SyncOptions withOpenClStepBytes(long bytes) {
        return withOpenCl(openCl.withStepBytes(bytes));
    }
}
