package io.gradsync.bench;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.cuda.driver.CudaFunction;
import io.gradsync.tasks.cuda.driver.CudaModule;
import io.gradsync.tasks.kernels.KernelFamily;
import io.gradsync.tasks.kernels.KernelSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The CUDA C versions of the built-in kernels (each family's file beside its Java class, after the
 * shared {@link KernelFamily#CUDA_COMMON}: {@link KernelSpec#cudaReference()}), put together into
 * one source and built on the machine that runs them with {@code nvcc -O3 -cubin -arch=sm_XX} for
 * the GPU's own compute capability and loaded as a cubin, so the generated PTX is measured against
 * what NVIDIA's own compiler makes of the same kernel.
 */
public final class NvccReference {
    /** The name of the one source nvcc builds. */
    static final String SOURCE = "reference-kernels.cu";

    private final Path nvcc;
    private final Map<Integer, byte[]> cubins = new ConcurrentHashMap<>();
    private final Map<CudaDevice, CudaModule> modules = new ConcurrentHashMap<>();

    private NvccReference(Path nvcc) {
        this.nvcc = nvcc;
    }

    /** nvcc from {@code $GRADSYNC_NVCC}, the PATH or {@code /usr/local/cuda/bin}; empty when none is there. */
    public static Optional<NvccReference> find() {
        String override = System.getenv("GRADSYNC_NVCC");
        if (override != null && !override.isBlank()) {
            Path p = Path.of(override);
            return Files.isExecutable(p) ? Optional.of(new NvccReference(p)) : Optional.empty();
        }
        String path = System.getenv().getOrDefault("PATH", "");
        for (String dir : (path + ":/usr/local/cuda/bin").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "nvcc"))) {
                return Optional.of(new NvccReference(Path.of(dir, "nvcc")));
            }
        }
        return Optional.empty();
    }

    /** The CUDA C source nvcc builds: the shared part, then every family's file, in {@link KernelFamily} order. */
    public static String source() {
        StringBuilder cu = new StringBuilder(KernelFamily.cudaCommon());
        for (KernelFamily f : KernelFamily.values()) {
            cu.append("\n// ---- ").append(f.cudaFile()).append("\n").append(f.cudaSource());
        }
        return cu.toString();
    }

    public Path nvcc() {
        return nvcc;
    }

    /** Compiles the reference kernels for compute capability {@code sm} (90 for sm_90), once per capability. */
    public byte[] cubin(int sm) {
        return cubins.computeIfAbsent(sm, this::compile);
    }

    private byte[] compile(int sm) {
        try {
            Path dir = Files.createTempDirectory("gradsync-nvcc");
            try {
                Path cu = Files.writeString(dir.resolve(SOURCE), source());
                Path out = dir.resolve("reference-kernels.cubin");
                List<String> cmd = List.of(nvcc.toString(), "-O3", "-cubin", "-arch=sm_" + sm, "-o", out.toString(), cu.toString());
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
                String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
                if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
                    throw new IllegalStateException(String.join(" ", cmd) + " failed: " + log.lines().findFirst().orElse("(no output)"));
                }
                return Files.readAllBytes(out);
            } finally {
                try (var files = Files.list(dir)) {
                    files.forEach(f -> f.toFile().delete());
                }
                Files.deleteIfExists(dir);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("running " + nvcc + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running nvcc", e);
        }
    }

    /** The kernel {@code name} of the reference module loaded on {@code device}. */
    public CudaFunction function(CudaDevice device, String name) {
        return modules.computeIfAbsent(device, d -> CudaModule.load(d, cubin(d.smVersion()))).function(name);
    }

    /** The reference of {@code spec} loaded on {@code device}; an exception naming it where it has none. */
    public CudaFunction function(CudaDevice device, KernelSpec spec) {
        KernelSpec.CudaReference ref = spec.cudaReference()
                .orElseThrow(() -> new IllegalArgumentException(spec.name() + " has no CUDA C reference"));
        return function(device, ref.name());
    }
}
