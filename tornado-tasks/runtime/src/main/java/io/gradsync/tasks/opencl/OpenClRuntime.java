package io.gradsync.tasks.opencl;

import static org.jocl.CL.CL_DEVICE_TYPE_ALL;
import static org.jocl.CL.CL_PLATFORM_NAME;
import static org.jocl.CL.CL_PLATFORM_VERSION;
import static org.jocl.CL.CL_SUCCESS;
import static org.jocl.CL.clGetDeviceIDs;
import static org.jocl.CL.clGetPlatformIDs;
import static org.jocl.CL.clGetPlatformInfo;

import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.internal.Discovery;
import io.gradsync.tasks.device.internal.Discovery.Found;
import io.gradsync.tasks.device.RuntimeStatus;
import java.util.ArrayList;
import java.util.List;
import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.cl_device_id;
import org.jocl.cl_platform_id;

/**
 * Every OpenCL platform and device, through JOCL. Discovery never throws: a missing ICD loader or
 * an empty platform list becomes the reason in {@link #status()}. Each platform gets one context
 * holding all its devices, so events order queues of different devices of one platform.
 *
 * <p>Thread-safety: callable from any thread; discovery happens once.
 */
public final class OpenClRuntime {
    private static final Discovery<OpenClDevice> DISCOVERY = new Discovery<>("OpenCL", OpenClRuntime::look);

    private OpenClRuntime() {
    }

    public static RuntimeStatus status() {
        return DISCOVERY.status();
    }

    /** All devices of all platforms, platform by platform; empty when OpenCL is unavailable. */
    public static List<OpenClDevice> devices() {
        return DISCOVERY.devices();
    }

    /** The platforms that have usable devices, in platform order. */
    public static List<OpenClPlatform> platforms() {
        return DISCOVERY.devices().stream().map(OpenClDevice::platform).distinct().toList();
    }

    /** The device with this ordinal (its index in {@link #devices()}). */
    public static OpenClDevice device(int ordinal) {
        return DISCOVERY.device(ordinal);
    }

    /**
     * {@code n} distinct logical devices over the physical ones of the first platform listed,
     * cycling through them in {@link #devices()} order: on one PoCL device, {@code logicalDevices(4)} gives four devices
     * with queues of their own, which is how tests run multi-device code where there is one device.
     * Each call makes new ones; the caller closes them (that closes their queues, nothing else).
     */
    public static List<OpenClDevice> logicalDevices(int n) {
        List<OpenClDevice> devices = DISCOVERY.requireDevices();
        if (n < 1) {
            throw new IllegalArgumentException("logical device count must be >= 1, got " + n);
        }
        // one platform: the opencl backend averages devices of one context only (the first listed is the
        // preferred one, NVIDIA's GPUs before PoCL's CPU where both are registered)
        OpenClPlatform first = devices.getFirst().platform();
        List<OpenClDevice> own = devices.stream().filter(d -> d.platform() == first).toList();
        List<OpenClDevice> logical = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            logical.add(own.get(i % own.size()).logical(i));
        }
        return List.copyOf(logical);
    }

    private static Found<OpenClDevice> look() {
        int[] count = {0};
        int rc;
        try {
            CL.setExceptionsEnabled(false);
            rc = clGetPlatformIDs(0, null, count);
        } catch (Throwable t) {
            String msg = String.valueOf(t.getMessage());
            return Found.none(RuntimeStatus.unavailable(DeviceRuntime.OPENCL,
                    "the OpenCL ICD loader (libOpenCL.so.1) did not load: " + msg.lines().findFirst().orElse(msg)));
        }
        if (rc == CL.CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && count[0] == 0)) {
            return Found.none(RuntimeStatus.unavailable(DeviceRuntime.OPENCL,
                    "no OpenCL platform is registered (no ICD in /etc/OpenCL/vendors)"));
        }
        if (rc != CL_SUCCESS) {
            return Found.none(RuntimeStatus.unavailable(DeviceRuntime.OPENCL, "clGetPlatformIDs failed: " + CL.stringFor_errorCode(rc)));
        }
        cl_platform_id[] ids = new cl_platform_id[count[0]];
        clGetPlatformIDs(ids.length, ids, null);
        List<OpenClDevice> found = new ArrayList<>();
        List<String> names = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (int p = 0; p < ids.length; p++) {
            String name = platformString(ids[p], CL_PLATFORM_NAME);
            int[] n = {0};
            rc = clGetDeviceIDs(ids[p], CL_DEVICE_TYPE_ALL, 0, null, n);
            if (rc != CL_SUCCESS || n[0] == 0) {
                skipped.add(name + " (" + (rc != CL_SUCCESS ? CL.stringFor_errorCode(rc) : "no devices") + ")");
                continue;
            }
            cl_device_id[] devs = new cl_device_id[n[0]];
            clGetDeviceIDs(ids[p], CL_DEVICE_TYPE_ALL, devs.length, devs, null);
            try {
                OpenClPlatform platform = new OpenClPlatform(p, ids[p], name, platformString(ids[p], CL_PLATFORM_VERSION), devs);
                for (cl_device_id d : devs) {
                    found.add(new OpenClDevice(found.size(), platform, d));
                }
                names.add(name);
            } catch (RuntimeException e) {
                skipped.add(name + " (" + e.getMessage() + ")");
            }
        }
        if (found.isEmpty()) {
            return Found.none(RuntimeStatus.unavailable(DeviceRuntime.OPENCL, "no usable OpenCL device: " + String.join("; ", skipped)));
        }
        return new Found<>(RuntimeStatus.available(DeviceRuntime.OPENCL, found.size(), String.join(", ", names)
                + (skipped.isEmpty() ? "" : "; skipped " + String.join("; ", skipped))), found);
    }

    static String platformString(cl_platform_id platform, int param) {
        long[] size = {0};
        clGetPlatformInfo(platform, param, 0, null, size);
        byte[] buffer = new byte[(int) size[0]];
        clGetPlatformInfo(platform, param, buffer.length, Pointer.to(buffer), null);
        return OpenClDevice.cString(buffer);
    }
}
