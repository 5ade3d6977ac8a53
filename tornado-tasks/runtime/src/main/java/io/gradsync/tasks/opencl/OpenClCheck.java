package io.gradsync.tasks.opencl;

import io.gradsync.tasks.device.DeviceException;
import org.jocl.CL;

/** Turns OpenCL return codes into exceptions that name the call and the device. */
final class OpenClCheck {
    private OpenClCheck() {
    }

    static void check(int result, String call, String device) {
        if (result != CL.CL_SUCCESS) {
            throw new DeviceException(call, device, result, CL.stringFor_errorCode(result));
        }
    }
}
