package io.gradsync.nccl;

import java.util.concurrent.Callable;

/**
 * Run in a child JVM by the loader tests (NCCL loads once per JVM, so each case needs its
 * own): prints what discovery found as {@code key=value} lines.
 */
public final class AvailabilityProbe {
    private AvailabilityProbe() {
    }

    public static void main(String[] args) {
        NcclAvailability a = Nccl.availability();
        System.out.println("available=" + a.isAvailable());
        System.out.println("shim=" + a.shimLoaded());
        System.out.println("reason=" + a.reason());
        System.out.println("library=" + a.library());
        System.out.println("source=" + a.librarySource());
        System.out.println("loadedFrom=" + a.loadedFrom().orElse(""));
        System.out.println("availabilityVersion=" + a.version().map(NcclVersion::toString).orElse(""));
        System.out.println("missing=" + String.join(",", a.missingSymbols()));
        System.out.println("shimPath=" + NcclNative.class.getProtectionDomain().getCodeSource().getLocation());
        print("version", () -> Nccl.version().toString());
        print("uniqueId", () -> Nccl.newUniqueId().toHex());
        print("groupStart", () -> {
            Nccl.groupStart();
            return "ok";
        });
        print("initAll", () -> Nccl.initAll(0).toString());
        System.out.println("end=true");
    }

    private static void print(String key, Callable<String> call) {
        String value;
        try {
            value = call.call();
        } catch (NcclException e) {
            value = "NcclException " + e.getMessage();
        } catch (Exception e) {
            value = e.getClass().getSimpleName() + " " + e.getMessage();
        }
        System.out.println(key + "=" + value.replace('\n', ' '));
    }
}
