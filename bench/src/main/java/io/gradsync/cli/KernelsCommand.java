package io.gradsync.cli;

import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.kernels.KernelSources;
import io.gradsync.tasks.kernels.KernelSpec;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Lists the built-in kernels or writes their generated PTX / OpenCL C. */
@Command(name = "kernels", mixinStandardHelpOptions = true, versionProvider = Gradsync.Version.class,
        description = "List the built-in kernels, or write the code gradsync generates for each of them from its Java "
                + "bytecode: one file per kernel, its vector form beside it where it has one (NAME.vector.ptx / .cl: what a "
                + "launch whose arrays are all aligned runs), and one module (gradsync-kernels.ptx / .cl) holding all of them.",
        footer = {"", "Examples:",
            "  gradsync kernels",
            "  gradsync kernels --emit ptx --out build/ptx",
            "  gradsync kernels --emit ptx --sm 80 --out build/ptx-a100",
            "  gradsync kernels --emit opencl --out build/cl"})
final class KernelsCommand implements Callable<Integer> {
    @Option(names = "--emit", paramLabel = "TARGET", description = "ptx or opencl: write generated code instead of listing.")
    String emit;

    @Option(names = "--out", paramLabel = "DIR", description = "Folder to write into (created if missing); needed with --emit.")
    Path out;

    @Option(names = "--sm", paramLabel = "NN", defaultValue = "" + KernelSources.DEFAULT_SM,
            description = "PTX: compute capability as a number, 90 for sm_90 (default: ${DEFAULT-VALUE}).")
    int sm;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter w = spec.commandLine().getOut();
        if (emit == null) {
            if (out != null) {
                throw Usage.error(spec, "--out needs --emit ptx|opencl");
            }
            List<KernelSpec> all = BuiltinKernels.all();
            w.printf(Locale.ROOT, "%d built-in kernels:%n", all.size());
            for (KernelSpec k : all) {
                w.printf(Locale.ROOT, "  %-28s %-14s %s%n", k.name(), k.style().name().toLowerCase(Locale.ROOT),
                        k.method().toGenericString().replace("io.gradsync.tasks.api.", "").replace("io.gradsync.tasks.kernels.", ""));
            }
            w.flush();
            return 0;
        }
        KernelSources.Target target;
        try {
            target = KernelSources.Target.parse(emit.trim());
        } catch (IllegalArgumentException e) {
            throw Usage.error(spec, "--emit: " + e.getMessage());
        }
        if (out == null) {
            throw Usage.error(spec, "--emit needs --out DIR");
        }
        if (sm < 50 || sm > 200) {
            throw Usage.error(spec, "--sm: " + sm + " is not a compute capability such as 80 or 90");
        }
        Preflight.writableDirectory(spec, "--out", out);
        List<Path> files = KernelSources.emitAll(target, out, sm);
        long vector = files.stream().filter(f -> f.getFileName().toString().contains(".vector.")).count();
        w.printf(Locale.ROOT, "wrote %d files (%d kernels, %d of them also in their vector form%s) to %s%n", files.size(),
                files.size() - 1 - vector, vector, target == KernelSources.Target.PTX ? ", sm_" + sm : "", out);
        w.flush();
        return 0;
    }
}
