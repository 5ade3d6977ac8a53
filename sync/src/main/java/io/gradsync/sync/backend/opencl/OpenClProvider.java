package io.gradsync.sync.backend.opencl;

import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.backend.BackendProvider;
import io.gradsync.sync.backend.DeviceChecks;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.opencl.OpenClDevice;
import java.util.ArrayList;
import java.util.List;

/** {@code opencl}: the project's kernels as OpenCL C on devices of one platform; never {@code auto}'s choice. */
public final class OpenClProvider implements BackendProvider {
    @Override
    public SyncBackend backend() {
        return SyncBackend.OPENCL;
    }

    @Override
    public DeviceRuntime runtime() {
        return DeviceRuntime.OPENCL;
    }

    @Override
    public int autoRank() {
        return -1;
    }

    @Override
    public String autoRefusal(List<? extends Device> devices, AutoContext context) {
        return "never chosen by auto";
    }

    /** OpenCL devices of one platform (logical devices over one physical device count as several). */
    @Override
    public GradientSynchronizer create(List<? extends Device> devices, SyncOptions options) {
        List<OpenClDevice> cl = new ArrayList<>();
        for (Device d : devices) {
            if (!(d instanceof OpenClDevice o)) {
                throw new UnsupportedOperationException("backend opencl needs OpenCL devices, got " + DeviceChecks.ids(devices));
            }
            if (o.platform() != ((OpenClDevice) devices.getFirst()).platform()) {
                throw new IllegalArgumentException("backend opencl needs devices of one OpenCL platform, got "
                        + devices.stream().map(x -> x.id() + " (" + ((OpenClDevice) x).platform().name() + ")").toList());
            }
            cl.add(o);
        }
        DeviceChecks.checkKernelArity("opencl", devices);
        return new OpenClSynchronizer(cl, options.openCl(), options.waitForCaller());
    }
}
