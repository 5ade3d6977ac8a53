package io.gradsync.bench;

import io.gradsync.sync.DType;
import io.gradsync.sync.SyncBackend;

/**
 * One row of the sync table: a backend running one collective on {@code bytes} per replica over
 * {@code replicas} devices. Times are per call, in microseconds. Bandwidths follow nccl-tests:
 * algbw = bytes / time; busbw = algbw times the collective's bus factor
 * ({@link BenchCollective#busFactor}: 2(n-1)/n for the all-reduce, the traffic each link carries in
 * a ring), which makes figures comparable across device counts. {@code timing} says how the calls
 * were timed; {@code wire}, the type fp32 gradients crossed as ({@code FP32}: as they are, and for
 * 16-bit gradients, which always go as they are).
 */
public record SyncMeasurement(SyncBackend backend, String runtime, int replicas, long bytes, DType dtype,
        double medianMicros, double minMicros, double maxMicros, int iterations, long wrong, String timing,
        BenchCollective collective, DType wire) {

    /** A row of fp32 gradients sent as they are (or of 16-bit gradients). */
    public SyncMeasurement(SyncBackend backend, String runtime, int replicas, long bytes, DType dtype,
            double medianMicros, double minMicros, double maxMicros, int iterations, long wrong, String timing,
            BenchCollective collective) {
        this(backend, runtime, replicas, bytes, dtype, medianMicros, minMicros, maxMicros, iterations, wrong, timing, collective,
                DType.FP32);
    }

    /** An all-reduce row. */
    public SyncMeasurement(SyncBackend backend, String runtime, int replicas, long bytes, DType dtype,
            double medianMicros, double minMicros, double maxMicros, int iterations, long wrong, String timing) {
        this(backend, runtime, replicas, bytes, dtype, medianMicros, minMicros, maxMicros, iterations, wrong, timing,
                BenchCollective.ALL_REDUCE);
    }

    /** The backend's label, and the wire where fp32 gradients crossed as 16-bit values: "ptx", "ptx, bf16 wire". */
    public String label() {
        return backend.label() + (wire == DType.FP32 ? "" : ", " + wire.label() + " wire");
    }

    /** How {@link SyncBench} times a call: on the host, entry to return. */
    public static final String HOST_TIMING = "host";

    /** (max - min) / median, in percent: how much the timed calls disagree. */
    public double spreadPercent() {
        return (maxMicros - minMicros) / medianMicros * 100;
    }

    public long count() {
        return bytes / dtype.bytes();
    }

    public double algbwGBs() {
        return bytes / (medianMicros * 1e3);
    }

    public double busbwGBs() {
        return algbwGBs() * collective.busFactor(replicas);
    }
}
