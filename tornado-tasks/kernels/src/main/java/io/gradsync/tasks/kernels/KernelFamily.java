package io.gradsync.tasks.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * A family of built-in kernels: the class that holds their Java bodies and, beside it in this
 * module's resources, the file of their CUDA C reference (built with nvcc by the bench's
 * {@code gradsync compare}). Their JVM fast forms sit beside the class too ({@code AverageJvmForm}
 * and the like). {@link BuiltinKernels} finds the kernels of every family; {@link KernelSpec} says
 * which forms each kernel has.
 *
 * <p>The CUDA C sources are read here, in the module that owns them, so that no package needs to
 * be opened for another module to read them. Thread-safety: immutable; safe from any thread.
 */
public enum KernelFamily {
    /** The fused averages of 2..8 replicas, into an output or in place into every input ({@link AverageKernels}). */
    AVERAGES(AverageKernels.class, "averages.cu"),
    /** {@code sumInto}, {@code scale} and {@code copy} ({@link ElementwiseKernels}). */
    ELEMENTWISE(ElementwiseKernels.class, "elementwise.cu"),
    /** Between fp32 and the 16-bit types ({@link ConversionKernels}). */
    CONVERSIONS(ConversionKernels.class, "conversions.cu"),
    /** The finite check and sums of squares ({@link ReductionKernels}). */
    REDUCTIONS(ReductionKernels.class, "reductions.cu");

    /** The CUDA C every family's file builds on (types, loads and stores, the grid-stride loop). */
    public static final String CUDA_COMMON = "common.cu";

    private final Class<?> kernelClass;
    private final String cudaFile;

    KernelFamily(Class<?> kernelClass, String cudaFile) {
        this.kernelClass = kernelClass;
        this.cudaFile = cudaFile;
    }

    /** The class whose public static methods are this family's kernels. */
    public Class<?> kernelClass() {
        return kernelClass;
    }

    /** The name of this family's CUDA C reference file, beside {@link #kernelClass()}. */
    public String cudaFile() {
        return cudaFile;
    }

    /** This family's CUDA C reference: its kernels under their own names, after {@link #cudaCommon()}. */
    public String cudaSource() {
        return read(cudaFile);
    }

    /** The CUDA C every family's source needs first ({@link #CUDA_COMMON}). */
    public static String cudaCommon() {
        return read(CUDA_COMMON);
    }

    /** The family whose kernels {@code c} holds, if it is one of them. */
    public static Optional<KernelFamily> of(Class<?> c) {
        for (KernelFamily f : values()) {
            if (f.kernelClass == c) {
                return Optional.of(f);
            }
        }
        return Optional.empty();
    }

    private static String read(String file) {
        try (InputStream in = KernelFamily.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("resource " + file + " missing from the kernels jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file + ": " + e.getMessage(), e);
        }
    }
}
