package io.gradsync.tasks.cuda.driver;

import io.gradsync.tasks.device.DeviceException;
import jcuda.driver.CUresult;

/** Turns CUDA driver return codes into exceptions that name the call and the device. */
public final class CudaCheck {
    private CudaCheck() {
    }

    public static void check(int result, String call, String device) {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new DeviceException(call, device, result, CUresult.stringFor(result));
        }
    }
}
