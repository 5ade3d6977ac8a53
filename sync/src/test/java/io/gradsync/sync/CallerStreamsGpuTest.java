package io.gradsync.sync;

import io.gradsync.sync.backend.Resources;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code cpu} and {@code ptx} backends on the caller's CUDA streams while those streams are still busy with
 * earlier work, with replicas sharing the GPUs (so every stream of a call shares the GPU's
 * hardware queues: {@code CUDA_DEVICE_MAX_CONNECTIONS}, 8 unless set). A wait queued ahead of a
 * copy that its release needs would hang the round: each configuration must finish its rounds
 * within the timeout, every round's average exact. Run once with the variable unset and once with
 * it set ({@code scripts/gpu-node-run} takes the environment).
 */
@Tag("gpu")
class CallerStreamsGpuTest {
    private static final int ROUNDS = 100;
    private static final long BUSY_BYTES = 256L << 20;

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        cases.add(Arguments.of(3, 4L << 20, true)); // first: the configuration that hung before the copies were queued ahead
        for (int n : new int[] {2, 3, 4, 8}) {
            for (long bytes : new long[] {4L << 10, 256L << 10, 4L << 20, 64L << 20}) {
                for (boolean async : new boolean[] {false, true}) {
                    if (n == 3 && bytes == 4L << 20 && async) {
                        continue;
                    }
                    cases.add(Arguments.of(n, bytes, async));
                }
            }
        }
        return cases.stream();
    }

    /** ptx: its recorded graph waits for the caller's streams itself, at every replay. */
    static Stream<Arguments> ptxCases() {
        List<Arguments> cases = new ArrayList<>();
        for (int n : new int[] {2, 4, 8}) {
            for (long bytes : new long[] {4L << 10, 4L << 20}) {
                for (boolean async : new boolean[] {false, true}) {
                    cases.add(Arguments.of(n, bytes, async));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} replicas, {1} bytes, async {2}")
    @MethodSource("cases")
    void busyCallerStreamsNeverHoldUpTheAverage(int n, long bytes, boolean async) {
        rounds(SyncBackend.CPU, n, bytes, async);
    }

    @ParameterizedTest(name = "{0} replicas, {1} bytes, async {2}")
    @MethodSource("ptxCases")
    void busyCallerStreamsNeverHoldUpPtx(int n, long bytes, boolean async) {
        rounds(SyncBackend.PTX, n, bytes, async, SyncOptions.defaults());
    }

    /**
     * As above with every GPU averaging its own slices of a small call: logical devices of one GPU
     * otherwise average every one-shot call on the first alone ({@link PtxOptions#oneGpuMaxBytes()}).
     */
    @ParameterizedTest(name = "{0} replicas, async {1}")
    @CsvSource({"2, false", "2, true", "4, false", "4, true", "8, true"})
    void busyCallerStreamsNeverHoldUpPtxPerGpu(int n, boolean async) {
        rounds(SyncBackend.PTX, n, 4L << 10, async, SyncOptions.defaults().withPtx(PtxOptions.defaults().withOneGpuMaxBytes(0)));
    }

    private static void rounds(SyncBackend backend, int n, long bytes, boolean async) {
        rounds(backend, n, bytes, async, SyncOptions.defaults());
    }

    private static void rounds(SyncBackend backend, int n, long bytes, boolean async, SyncOptions options) {
        assumeTrue(!DeviceCatalog.gpus(DeviceRuntime.CUDA).isEmpty(),
                () -> "a CUDA GPU needed: " + DeviceCatalog.status(DeviceRuntime.CUDA).describe());
        List<? extends Device> devices = DeviceCatalog.sharedGpus(DeviceRuntime.CUDA, n);
        long count = bytes / 4;
        List<AutoCloseable> open = new ArrayList<>();
        try (GradientSynchronizer sync = Synchronizers.create(backend, devices, options)) {
            List<DeviceStream> callers = new ArrayList<>();
            List<DeviceBuffer> grads = new ArrayList<>();
            List<DeviceBuffer> busy = new ArrayList<>();
            List<HostBuffer[]> inputs = new ArrayList<>();
            List<HostBuffer> seen = new ArrayList<>();
            List<Replica> replicas = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                Device d = devices.get(r);
                DeviceStream caller = track(open, d.createStream());
                DeviceBuffer grad = track(open, d.allocate(bytes));
                HostBuffer[] in = {track(open, d.allocateHost(bytes)), track(open, d.allocateHost(bytes))};
                for (int parity = 0; parity < 2; parity++) {
                    MemorySegment s = in[parity].segment();
                    for (long i = 0; i < count; i++) {
                        s.setAtIndex(ValueLayout.JAVA_FLOAT, i, value(r, i, parity));
                    }
                }
                callers.add(caller);
                grads.add(grad);
                busy.add(track(open, d.allocate(BUSY_BYTES)));
                inputs.add(in);
                seen.add(track(open, d.allocateHost(bytes)));
                replicas.add(Replica.on(d).add("w", grad, DType.FP32).stream(caller).build());
            }
            assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
                for (int round = 0; round < ROUNDS; round++) {
                    int parity = round & 1;
                    for (int r = 0; r < n; r++) { // earlier work, then "backward" writing the gradient
                        for (int k = 0; k < 4; k++) {
                            callers.get(r).fill32(busy.get(r), 0, BUSY_BYTES, round + k);
                        }
                        callers.get(r).copyFromHost(inputs.get(r)[parity], 0, grads.get(r), 0, bytes);
                    }
                    SyncHandle h = null;
                    if (async) {
                        h = sync.synchronizeAsync(replicas);
                    } else {
                        sync.synchronize(replicas);
                    }
                    for (int r = 0; r < n; r++) { // "optimizer": reads the average on the caller's stream
                        callers.get(r).copyToHost(grads.get(r), 0, seen.get(r), 0, bytes);
                    }
                    if (h != null) {
                        h.await();
                    }
                    for (DeviceStream c : callers) {
                        c.synchronize();
                    }
                    for (int r = 0; r < n; r++) {
                        assertAverage(seen.get(r).segment(), count, n, parity, round, r);
                    }
                }
            }, () -> backend + ", " + n + " replicas, " + bytes + " bytes, async " + async + ": the rounds did not finish (a deadlock?)");
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                Resources.closeQuietly(open.get(i));
            }
        }
    }

    /** Replica r's value: exact sums, a pattern along the gradient, and a change every round. */
    private static float value(int r, long i, int parity) {
        return 2 * r + (i & 1023) + parity * 1024;
    }

    private static void assertAverage(MemorySegment s, long count, int n, int parity, int round, int r) {
        for (long i = 0; i < count; i += 61) {
            assertElement(s, i, n, parity, round, r);
        }
        assertElement(s, count - 1, n, parity, round, r);
    }

    private static void assertElement(MemorySegment s, long i, int n, int parity, int round, int r) {
        float expected = (n - 1) + (i & 1023) + parity * 1024;
        float got = s.getAtIndex(ValueLayout.JAVA_FLOAT, i);
        if (got != expected) {
            assertEquals(expected, got, "round " + round + ", replica " + r + ", element " + i);
        }
    }

    private static <T extends AutoCloseable> T track(List<AutoCloseable> open, T resource) {
        open.add(resource);
        return resource;
    }
}
