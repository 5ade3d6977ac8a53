package io.gradsync.cli;

import io.gradsync.bench.MachineInfo;
import io.gradsync.tasks.DeviceCatalog;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.DeviceRuntime;
import io.gradsync.tasks.device.RuntimeStatus;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Lists each runtime's devices, or why the runtime is unavailable. */
@Command(name = "devices", mixinStandardHelpOptions = true, versionProvider = Gradsync.Version.class,
        description = "List every device of every runtime (CUDA, OpenCL, JVM), the CUDA peer-access matrix, and whether "
                + "NCCL loads (its version and library, or why not: the nccl backend needs it).",
        footer = {"", "Examples:", "  gradsync devices"})
final class DevicesCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        for (RuntimeStatus status : DeviceCatalog.statuses()) {
            out.println(status.describe());
            if (!status.available()) {
                continue;
            }
            for (Device d : DeviceCatalog.listed(status.runtime())) {
                out.printf(Locale.ROOT, "  %-10s %-40s %8.1f GiB  %s%n", d.id(), d.name(),
                        d.memoryBytes() / (double) (1L << 30), d.capability());
            }
            if (status.runtime() == DeviceRuntime.CUDA && DeviceCatalog.listed(DeviceRuntime.CUDA).size() > 1) {
                printPeers(out);
            }
        }
        // not a device runtime, but what the nccl backend (and auto's first choice for several GPUs) needs
        out.println("nccl: " + MachineInfo.ncclDescription());
        out.flush();
        return 0;
    }

    private static void printPeers(PrintWriter out) {
        boolean[][] m = DeviceCatalog.cudaPeerMatrix();
        List<? extends Device> devices = DeviceCatalog.listed(DeviceRuntime.CUDA);
        out.println("  peer access (row reads column):");
        StringBuilder head = new StringBuilder("  " + " ".repeat(8));
        for (Device d : devices) {
            head.append(String.format(Locale.ROOT, "%8s", d.id()));
        }
        out.println(head);
        for (int i = 0; i < m.length; i++) {
            StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "  %-8s", devices.get(i).id()));
            for (int j = 0; j < m.length; j++) {
                row.append(String.format(Locale.ROOT, "%8s", i == j ? "-" : m[i][j] ? "yes" : "no"));
            }
            out.println(row);
        }
    }
}
