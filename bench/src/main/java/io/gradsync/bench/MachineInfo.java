package io.gradsync.bench;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gradsync.nccl.Nccl;
import io.gradsync.nccl.NcclAvailability;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.RuntimeStatus;
import java.net.InetAddress;
import java.util.Collection;
import java.util.List;

/**
 * The machine a benchmark ran on, as JSON: host, JVM, every runtime's status (the CUDA driver
 * version is in its detail), the NCCL library, and the devices measured. Figures without this are
 * not comparable across runs.
 */
public final class MachineInfo {
    private MachineInfo() {
    }

    public static ObjectNode describe(Collection<? extends List<? extends Device>> devicesUsed) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        ObjectNode m = f.objectNode();
        m.put("host", hostName());
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        m.put("cpus", Runtime.getRuntime().availableProcessors());
        ObjectNode jvm = m.putObject("jvm");
        jvm.put("version", Runtime.version().toString());
        jvm.put("vendor", System.getProperty("java.vm.vendor"));
        jvm.put("vm", System.getProperty("java.vm.name"));
        jvm.put("maxHeapBytes", Runtime.getRuntime().maxMemory());
        ArrayNode runtimes = m.putArray("runtimes");
        for (RuntimeStatus s : DeviceCatalog.statuses()) {
            ObjectNode r = runtimes.addObject();
            r.put("runtime", s.runtime().label());
            r.put("available", s.available());
            r.put("devices", s.deviceCount());
            r.put("detail", s.detail());
        }
        RuntimeStatus cuda = DeviceCatalog.status(DeviceRuntime.CUDA);
        m.put("cudaDriver", cuda.available() ? cuda.detail() : "unavailable: " + cuda.detail());
        m.put("nccl", ncclDescription());
        ArrayNode devices = m.putArray("devices");
        for (List<? extends Device> list : devicesUsed) {
            for (Device d : list) {
                ObjectNode o = devices.addObject();
                o.put("id", d.id());
                o.put("runtime", d.runtime().label());
                o.put("name", d.name());
                o.put("memoryBytes", d.memoryBytes());
                o.put("capability", d.capability());
            }
        }
        return m;
    }

    /** "2.27.7 (libnccl.so.2)" or "unavailable: reason"; never throws, NCCL is optional. */
    public static String ncclDescription() {
        try {
            NcclAvailability a = Nccl.availability();
            if (!a.isAvailable()) {
                return "unavailable: " + a.reason();
            }
            return a.version().map(Object::toString).orElse("unknown version") + " (" + a.loadedFrom().orElse(a.library()) + ")";
        } catch (RuntimeException | LinkageError e) {
            return "unavailable: " + e.getMessage();
        }
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "unknown";
        }
    }
}
