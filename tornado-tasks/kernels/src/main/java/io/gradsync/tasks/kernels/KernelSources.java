package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes the generated device code of every built-in kernel, for {@code gradsync kernels --emit}:
 * one file per kernel ({@code <name>.ptx} or {@code <name>.cl}) plus one module/program holding
 * all of them ({@code gradsync-kernels.ptx} / {@code .cl}), which is what a runtime loads.
 *
 * <p>Thread-safety: stateless static methods, callable from any thread at once.
 */
public final class KernelSources {
    /** Compute capability used when none is given: the H200 (sm_90). */
    public static final int DEFAULT_SM = 90;

    /** What to emit. */
    public enum Target {
        PTX("ptx"), OPENCL("cl");

        private final String extension;

        Target(String extension) {
            this.extension = extension;
        }

        public String extension() {
            return extension;
        }

        /** Parses "ptx" or "opencl" (case-insensitive). */
        public static Target parse(String s) {
            return switch (s.toLowerCase(java.util.Locale.ROOT)) {
                case "ptx" -> PTX;
                case "opencl", "cl" -> OPENCL;
                default -> throw new IllegalArgumentException("unknown target '" + s + "' (ptx or opencl)");
            };
        }
    }

    private KernelSources() {
    }

    /** Emits all built-in kernels for {@code target} into {@code dir} (created if missing); returns the files written. */
    public static List<Path> emitAll(Target target, Path dir) {
        return emitAll(target, dir, DEFAULT_SM);
    }

    /**
     * As {@link #emitAll(Target, Path)}, PTX for compute capability {@code sm} (e.g. 90). Beside
     * each file of a kernel with a vector form (element-wise, or in PTX merging adjacent loads),
     * {@code <name>.vector.<ext>}: that form, which a launch whose arrays are all aligned runs.
     */
    public static List<Path> emitAll(Target target, Path dir, int sm) {
        List<CompiledKernel> kernels = compileAll();
        List<Path> written = new ArrayList<>();
        try {
            Files.createDirectories(dir);
            for (CompiledKernel k : kernels) {
                String text = target == Target.PTX ? k.ptx(sm) : k.openCl();
                written.add(Files.writeString(dir.resolve(k.entryName() + "." + target.extension()), text));
                boolean vector = target == Target.PTX ? k.hasVectorForm() : k.openClVectorWidth() > 1;
                if (vector) {
                    String v = target == Target.PTX ? k.ptx(sm, java.util.Set.of(), true) : k.openCl(true);
                    written.add(Files.writeString(dir.resolve(k.entryName() + ".vector." + target.extension()), v));
                }
            }
            written.add(Files.writeString(dir.resolve("gradsync-kernels." + target.extension()), allInOne(target, sm)));
        } catch (IOException e) {
            throw new UncheckedIOException("writing kernels to " + dir + ": " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : " " + e.getMessage()), e);
        }
        return written;
    }

    /** Every built-in kernel in one PTX module or OpenCL program. */
    public static String allInOne(Target target, int sm) {
        List<CompiledKernel> kernels = compileAll();
        return target == Target.PTX ? KernelCompiler.ptxModule(kernels, sm) : KernelCompiler.openClProgram(kernels);
    }

    /** Compiles every built-in kernel (cached). */
    public static List<CompiledKernel> compileAll() {
        return BuiltinKernels.all().stream().map(KernelSpec::compile).toList();
    }
}
