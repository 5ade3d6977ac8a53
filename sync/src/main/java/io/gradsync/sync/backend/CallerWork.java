package io.gradsync.sync.backend;

import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncOptions;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceEvent;
import io.gradsync.tasks.device.DeviceStream;
import java.util.List;

/**
 * How a local synchronizer orders a call after the caller's work on the gradients: where a
 * replica names a stream, behind an event recorded on it at the call's start; elsewhere behind a
 * wait for the whole device, unless {@link SyncOptions#waitForCaller()} is off.
 *
 * <p>Thread-safety: used under its synchronizer's lock, or by the one background call in flight.
 */
final class CallerWork {
    private final List<? extends Device> devices;
    private final boolean waitForCaller;
    /** Per device: recorded on the caller's stream at the start of a call (made on first use). */
    private final DeviceEvent[] ready;
    /** The replicas of the call in progress. */
    private List<Replica> current;

    CallerWork(List<? extends Device> devices, boolean waitForCaller) {
        this.devices = devices;
        this.waitForCaller = waitForCaller;
        this.ready = new DeviceEvent[devices.size()];
    }

    /** The call on {@code replicas} starts: its caller streams are theirs. */
    void begin(List<Replica> replicas) {
        current = replicas;
    }

    void end() {
        current = null;
    }

    /** Each of {@code starts} on replica r's device waits for replica r's caller work. */
    void await(DeviceStream... starts) {
        for (int r = 0; r < devices.size(); r++) {
            DeviceEvent e = callerReady(r);
            for (DeviceStream s : starts) {
                if (e != null && s != null && s.device() == devices.get(r)) {
                    s.waitFor(e);
                }
            }
        }
    }

    /**
     * Every replica's caller work waited for here, on the host: a stream's up to now (its event),
     * elsewhere the whole device where asked. For work the host does itself on host memory.
     */
    void awaitOnHost() {
        for (int r = 0; r < devices.size(); r++) {
            DeviceEvent e = callerReady(r);
            if (e != null) {
                e.synchronize();
            }
        }
    }

    /** {@code start} waits for every replica's caller work. */
    void awaitOn(DeviceStream start) {
        for (int r = 0; r < devices.size(); r++) {
            DeviceEvent e = callerReady(r);
            if (e != null) {
                start.waitFor(e);
            }
        }
    }

    /**
     * Every replica's event of its caller stream, made now where missing: what a recorded call's
     * start waits for at each replay (an event never recorded is waited for at once).
     */
    DeviceEvent[] readyEvents() {
        for (int r = 0; r < devices.size(); r++) {
            if (ready[r] == null) {
                ready[r] = devices.get(r).createUntimedEvent();
            }
        }
        return ready.clone();
    }

    /** Each caller stream marked now (its event recorded; no stream: the device waited for where asked), for a start that waits for {@link #readyEvents} itself. */
    void mark() {
        for (int r = 0; r < devices.size(); r++) {
            callerReady(r);
        }
    }

    /** Replica r's caller stream marked now, or (no stream) its device waited for where asked and null. */
    private DeviceEvent callerReady(int r) {
        DeviceStream caller = current.get(r).stream();
        if (caller == null) {
            if (waitForCaller) {
                devices.get(r).synchronize();
            }
            return null;
        }
        if (ready[r] == null) {
            ready[r] = devices.get(r).createUntimedEvent();
        }
        caller.record(ready[r]);
        return ready[r];
    }

    void close() {
        for (DeviceEvent e : ready) {
            Resources.closeQuietly(e);
        }
    }
}
