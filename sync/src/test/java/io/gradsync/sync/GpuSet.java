package io.gradsync.sync;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import java.util.List;

/**
 * Where a GPU test's replicas live: on a GPU each, or, {@code shared}, as logical devices over two
 * GPUs (one where there is one), so the n-GPU schedule runs where fewer GPUs are lent (and is
 * skipped where there are n). A test that needs more GPUs than the node has is skipped visibly.
 */
public record GpuSet(int replicas, boolean shared) {

    public static GpuSet own(int n) {
        return new GpuSet(n, false);
    }

    public static GpuSet shared(int n) {
        return new GpuSet(n, true);
    }

    /** {@code "4"}: four GPUs; {@code "4 shared"}: four replicas sharing GPUs (JUnit converts parameters with it). */
    public static GpuSet of(String text) {
        String[] words = text.trim().split("\\s+");
        if (words.length > 2 || (words.length == 2 && !words[1].equals("shared"))) {
            throw new IllegalArgumentException("GPU set '" + text + "': a count, optionally followed by 'shared'");
        }
        return new GpuSet(Integer.parseInt(words[0]), words.length == 2);
    }

    /** The runtime's devices for these replicas, or a skip saying what is missing. */
    public List<? extends Device> devices(DeviceRuntime runtime) {
        var status = DeviceCatalog.status(runtime);
        List<? extends Device> gpus = DeviceCatalog.gpus(runtime);
        if (shared) {
            assumeTrue(!gpus.isEmpty(), () -> "a " + runtime.label() + " GPU needed: " + status.describe());
            // they stand in for GPUs that are missing; where there are enough, the own-GPU cases run instead
            assumeTrue(gpus.size() < replicas, () -> gpus.size() + " " + runtime.label() + " GPUs here: the "
                    + replicas + "-GPU cases cover this");
            return DeviceCatalog.sharedGpus(runtime, replicas);
        }
        assumeTrue(gpus.size() >= replicas, () -> replicas + " " + runtime.label() + " GPUs needed, " + gpus.size()
                + " here: " + status.describe());
        return gpus.subList(0, replicas);
    }

    @SuppressWarnings("unchecked")
    public List<CudaDevice> cuda() {
        return (List<CudaDevice>) devices(DeviceRuntime.CUDA);
    }

    @Override
    public String toString() {
        if (!shared) {
            return replicas + " GPUs";
        }
        int gpus = Math.min(2, DeviceCatalog.gpus(DeviceRuntime.CUDA).size());
        return replicas + " replicas on " + (gpus == 0 ? "shared" : gpus) + (gpus == 1 ? " GPU" : " GPUs");
    }
}
