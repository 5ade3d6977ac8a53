package io.gradsync.sync.backend.ptx;

import static io.gradsync.sync.backend.Resources.closeQuietly;

import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.device.HostBuffer;
import java.util.List;

/**
 * The ptx backend's working memory, grown when a larger layout arrives and kept: per GPU its
 * scratch (slices staged from peers without P2P), its pinned staging buffer for
 * those peers, its fp64 partial sums of squares (on the device and pinned for the host), the
 * first stage's partials of large gradients, and its wire buffer (the 16-bit slices its peers send
 * it and their average, on a 16-bit wire); and the one pinned {@code result} buffer every GPU
 * uploads averaged slices from. Growing a buffer first runs the caller's {@code forget} (prepared
 * launches and recorded schedules point into the buffer about to be freed), then replaces it.
 *
 * <p>Thread-safety: none; used only under the {@link PtxSynchronizer}'s lock (its calls are serialized).
 */
final class PtxMemory {
    private final List<? extends Device> devices;
    private final DeviceBuffer[] scratch;
    private final HostBuffer[] host;
    private HostBuffer result;
    /** Per GPU: fp64 partial sums of squares on the device, and pinned for the host to add. */
    private final DeviceBuffer[] partialsDevice;
    private final HostBuffer[] partialsHost;
    /** Per GPU: the first stage's partials of large slices. */
    private final DeviceBuffer[] widePartials;
    /** Per GPU: on a 16-bit wire, the slices every replica sends it and their average ({@link PtxLayouts}). */
    private final DeviceBuffer[] wire;

    PtxMemory(List<? extends Device> devices) {
        this.devices = devices;
        int n = devices.size();
        scratch = new DeviceBuffer[n];
        host = new HostBuffer[n];
        partialsDevice = new DeviceBuffer[n];
        partialsHost = new HostBuffer[n];
        widePartials = new DeviceBuffer[n];
        wire = new DeviceBuffer[n];
    }

    DeviceBuffer scratch(int i) {
        return scratch[i];
    }

    HostBuffer host(int i) {
        return host[i];
    }

    HostBuffer result() {
        return result;
    }

    DeviceBuffer partialsDevice(int i) {
        return partialsDevice[i];
    }

    HostBuffer partialsHost(int i) {
        return partialsHost[i];
    }

    DeviceBuffer widePartials(int i) {
        return widePartials[i];
    }

    DeviceBuffer wire(int i) {
        return wire[i];
    }

    /** GPU {@code i}'s scratch holds at least {@code bytes}. */
    void growScratch(int i, long bytes, Runnable forget) {
        grow(scratch, i, bytes, forget);
    }

    /** GPU {@code i}'s pinned staging buffer holds at least {@code bytes}. */
    void growHost(int i, long bytes, Runnable forget) {
        if (host[i] == null || host[i].byteSize() < bytes) {
            forget.run();
            closeQuietly(host[i]);
            host[i] = null;
            host[i] = devices.get(i).allocateHost(bytes);
        }
    }

    /** The shared pinned result buffer holds at least {@code bytes}. */
    void growResult(long bytes, Runnable forget) {
        if (result == null || result.byteSize() < bytes) {
            forget.run();
            closeQuietly(result);
            result = null;
            result = devices.getFirst().allocateHost(bytes); // portable: every GPU copies from it
        }
    }

    /** GPU {@code i}'s partials, device and pinned, hold at least {@code bytes}. */
    void growPartials(int i, long bytes, Runnable forget) {
        if (partialsDevice[i] == null || partialsDevice[i].byteSize() < bytes) {
            forget.run();
            closeQuietly(partialsDevice[i]);
            closeQuietly(partialsHost[i]);
            partialsDevice[i] = null;
            partialsHost[i] = null;
            partialsDevice[i] = devices.get(i).allocate(bytes);
            partialsHost[i] = devices.get(i).allocateHost(bytes);
        }
    }

    /** GPU {@code i}'s first-stage partials hold at least {@code bytes}. */
    void growWidePartials(int i, long bytes, Runnable forget) {
        grow(widePartials, i, bytes, forget);
    }

    /** GPU {@code i}'s wire buffer holds at least {@code bytes}. */
    void growWire(int i, long bytes, Runnable forget) {
        grow(wire, i, bytes, forget);
    }

    private void grow(DeviceBuffer[] buffers, int i, long bytes, Runnable forget) {
        if (buffers[i] == null || buffers[i].byteSize() < bytes) {
            forget.run();
            closeQuietly(buffers[i]);
            buffers[i] = null;
            buffers[i] = devices.get(i).allocate(bytes);
        }
    }

    /** Frees every buffer; called once, after the streams are done with them. */
    void release() {
        for (int i = 0; i < scratch.length; i++) {
            closeQuietly(scratch[i]);
            closeQuietly(host[i]);
            closeQuietly(partialsDevice[i]);
            closeQuietly(partialsHost[i]);
            closeQuietly(widePartials[i]);
            closeQuietly(wire[i]);
        }
        closeQuietly(result);
    }
}
