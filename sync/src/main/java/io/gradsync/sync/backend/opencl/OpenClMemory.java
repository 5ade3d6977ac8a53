package io.gradsync.sync.backend.opencl;

import static io.gradsync.sync.backend.Resources.closeQuietly;

import io.gradsync.tasks.device.HostBuffer;
import io.gradsync.tasks.opencl.OpenClBuffer;
import io.gradsync.tasks.opencl.OpenClDevice;
import java.util.List;

/**
 * The opencl backend's staging: per device a pinned host buffer (its packed downloads) and a
 * device scratch buffer (the others' parts it averages), and the shared result buffer. They grow
 * when a larger layout arrives and are kept otherwise.
 */
final class OpenClMemory {
    private final List<OpenClDevice> devices;
    final HostBuffer[] host;
    final OpenClBuffer[] scratch;
    HostBuffer result;

    OpenClMemory(List<OpenClDevice> devices) {
        this.devices = devices;
        host = new HostBuffer[devices.size()];
        scratch = new OpenClBuffer[devices.size()];
    }

    /** Grows what is too small for {@code plan}. */
    void fit(OpenClPlan plan) {
        long packed = plan.slices.packedBytes();
        for (int i = 0; i < host.length; i++) {
            if (host[i] == null || host[i].byteSize() < packed) {
                closeQuietly(host[i]);
                host[i] = null;
                host[i] = devices.get(i).allocateHost(packed);
            }
            long used = plan.scratchBytes[i];
            if (scratch[i] == null || scratch[i].byteSize() < used) {
                closeQuietly(scratch[i]);
                scratch[i] = null;
                scratch[i] = devices.get(i).allocate(used);
            }
        }
        if (result == null || result.byteSize() < packed) {
            closeQuietly(result);
            result = null;
            // one platform, one context: every device of it copies from this buffer
            result = devices.getFirst().allocateHost(packed);
        }
    }

    void close() {
        for (int i = 0; i < host.length; i++) {
            closeQuietly(host[i]);
            closeQuietly(scratch[i]);
        }
        closeQuietly(result);
    }
}
