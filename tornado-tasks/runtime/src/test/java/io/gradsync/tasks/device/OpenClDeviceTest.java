package io.gradsync.tasks.device;

import java.util.List;

/** Runs on whatever OpenCL platform is registered: PoCL in CI, NVIDIA's on GPU nodes. */
class OpenClDeviceTest extends DeviceContractTest {
    @Override
    List<? extends Device> devices() {
        return twoOf(DeviceRuntime.OPENCL);
    }
}
