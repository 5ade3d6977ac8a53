package io.gradsync.tasks.device;

import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.List;
import org.junit.jupiter.api.AfterEach;

class JvmDeviceTest extends DeviceContractTest {
    private final List<JvmDevice> devices = JvmRuntime.createDevices(2);

    @Override
    List<? extends Device> devices() {
        return devices;
    }

    @AfterEach
    void close() {
        devices.forEach(JvmDevice::close);
    }
}
