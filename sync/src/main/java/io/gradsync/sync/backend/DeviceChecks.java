package io.gradsync.sync.backend;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import java.util.List;

/** The device checks several backends' providers make, with the wording they share. */
public final class DeviceChecks {
    /** Most devices the fused average kernels take (2..8 inputs): the ptx and opencl backends' limit. */
    public static final int MAX_DEVICE_REPLICAS = 8;

    private DeviceChecks() {
    }

    /** The fused average kernels take 2..8 inputs. */
    public static void checkKernelArity(String backend, List<? extends Device> devices) {
        if (devices.size() > MAX_DEVICE_REPLICAS) {
            throw new IllegalArgumentException("backend " + backend + " averages at most " + MAX_DEVICE_REPLICAS
                    + " devices (its fused kernels take 2..8 inputs), got " + devices.size());
        }
    }

    /** Two devices that are handles on one GPU ({@link CudaDevice#logical}), described, or null when there are none. */
    public static String sharedGpu(List<? extends Device> devices) {
        for (int i = 0; i < devices.size(); i++) {
            for (int j = i + 1; j < devices.size(); j++) {
                if (devices.get(i) instanceof CudaDevice a && devices.get(j) instanceof CudaDevice b && a.sameGpu(b)) {
                    return a.id() + " and " + b.id() + " are the same GPU";
                }
            }
        }
        return null;
    }

    public static boolean allCuda(List<? extends Device> devices) {
        return devices.stream().allMatch(d -> d instanceof CudaDevice);
    }

    public static List<String> ids(List<? extends Device> devices) {
        return devices.stream().map(Device::id).toList();
    }
}
