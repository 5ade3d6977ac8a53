package io.gradsync.sync;

import io.gradsync.sync.nccl.RendezvousConfig;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.CudaRuntime;
import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostFlag;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * One rank of {@link NcclGpuTest}'s dropped-handle test, in a process of its own (an aborted
 * communicator may leave the device unusable): an asynchronous average behind a caller stream that
 * a host flag holds, its handle dropped, then {@code close()}. The flag is raised after
 * {@code HOLD_MS}: past the timeout ({@code late}) close must throw the call's timeout; within it
 * ({@code in-time}) close must wait, return, and leave the average (with one rank, the inputs'
 * bits) in the gradient. The call itself returns at once: nothing of it waits for the caller's
 * stream on the host (a rank's layout check included).
 *
 * <p>Usage: {@code NcclDroppedHandleWorker TIMEOUT_MS HOLD_MS}. Prints {@code QUEUED} once the call
 * returned, then {@code CLOSED after_ms=.. same=true|false} and {@code LATE-AWAIT ok} (or
 * {@code LATE-AWAIT threw TYPE: ..}), or {@code CLOSE-THREW type=TYPE after_ms=.. message=..}.
 */
public final class NcclDroppedHandleWorker {
    private static final long COUNT = 1 << 20;

    private NcclDroppedHandleWorker() {
    }

    public static void main(String[] args) throws Exception {
        long timeoutMs = Long.parseLong(args[0]);
        long holdMs = Long.parseLong(args[1]);
        RendezvousConfig config = RendezvousConfig.fromEnvironment();
        CudaDevice device = CudaRuntime.device(config.localRank());
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gate");
            t.setDaemon(true);
            return t;
        });
        try (HostFlag gate = device.createHostFlag(); DeviceStream caller = device.createStream();
                ReplicaFixture f = ReplicaFixture.flat(List.of(device), COUNT, DType.FP32, 0x5EED)) {
            GradientSynchronizer sync = Synchronizers.create(SyncBackend.NCCL, List.of(device),
                    SyncOptions.defaults().withTimeout(Duration.ofMillis(timeoutMs)));
            caller.waitUntil(gate, 1); // the caller's "backward" is not done until the flag rises
            timer.schedule(() -> gate.raise(1), holdMs, TimeUnit.MILLISECONDS);
            SyncHandle dropped = sync.synchronizeAsync(List.of(f.replicas.getFirst().withStream(caller)));
            System.out.println("QUEUED");
            System.out.flush();
            long t0 = System.nanoTime();
            try {
                sync.close();
            } catch (RuntimeException e) {
                System.out.printf(Locale.ROOT, "CLOSE-THREW type=%s after_ms=%d message=%s%n", e.getClass().getSimpleName(),
                        (System.nanoTime() - t0) / 1_000_000, e.getMessage());
                System.out.flush();
                Runtime.getRuntime().halt(0);
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            caller.synchronize();
            MemorySegment got = f.download(0);
            boolean same = got.mismatch(f.inputs.getFirst().segment()) < 0;
            System.out.printf(Locale.ROOT, "CLOSED after_ms=%d same=%b%n", ms, same);
            try {
                dropped.await();
                System.out.println("LATE-AWAIT ok");
            } catch (RuntimeException e) {
                System.out.println("LATE-AWAIT threw " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            System.out.flush();
        }
        Runtime.getRuntime().halt(0);
    }
}
