package io.gradsync.examples.libtorch;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.DType;
import io.gradsync.sync.ForeignTensor;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.Replica;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.Synchronizers;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.ArrayList;
import java.util.List;
import org.bytedeco.pytorch.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A real libtorch model (autograd, libtorch's SGD) trained data-parallel with gradsync's cpu
 * backend over JVM devices, its grads living in gradsync's buckets: the replicas stay bit-identical
 * and follow one replica trained on the whole batch within fp32 noise; and where a user wraps
 * libtorch's own grads instead, libtorch's default {@code zero_grad()} moving them fails the call.
 */
class LibtorchTrainingTest {

    @ParameterizedTest(name = "{0} replicas")
    @ValueSource(ints = {2, 3})
    void replicasOnShardsFollowOneReplicaOnTheWholeBatch(int n) {
        LibtorchTraining.Result r = LibtorchTraining.train(new LibtorchTraining.Config(SyncBackend.CPU, n, 30, 24 * n, 7));
        System.out.printf("libtorch, %d replicas: loss %.5f -> %.5f, largest difference from one replica %.3g, sync %.1f us per step%n",
                n, r.initialLoss(), r.finalLoss(), r.maxDifference(), r.syncMicros());
        assertTrue(r.replicasIdentical(), "every replica's parameters have the same bits");
        assertTrue(r.maxDifference() < 1e-5, () -> "differs from one replica on the whole batch by " + r.maxDifference());
        assertTrue(r.finalLoss() < r.initialLoss() * 0.8, () -> "loss " + r.initialLoss() + " -> " + r.finalLoss());
    }

    /**
     * The misuse the buckets avoid: wrapping libtorch's own grads ({@code data_ptr()}) and then
     * letting {@code zero_grad()} free them (its default) before the next backward allocates new ones.
     * The call names the tensor instead of averaging freed memory.
     */
    @Test
    void gradsThatLibtorchMovedFailTheCallNamingThem() {
        List<JvmDevice> devices = JvmRuntime.createDevices(2);
        Tensor[] data = LibtorchTraining.data(8, 3);
        List<LibtorchTraining.Model> models = List.of(new LibtorchTraining.Model(1), new LibtorchTraining.Model(2));
        List<Tensor> kept = new ArrayList<>(); // the old grads stay allocated: the new ones cannot land on their addresses
        try (GradientSynchronizer sync = Synchronizers.create(SyncBackend.CPU, devices)) {
            List<Replica> replicas = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                LibtorchTraining.Model m = models.get(r);
                m.loss(data[0], data[1]).backward(); // libtorch allocates the grads on the first backward
                List<ForeignTensor> grads = new ArrayList<>();
                for (int i = 0; i < m.parameters.size(); i++) {
                    Tensor p = m.parameters.get(i);
                    grads.add(new ForeignTensor(LibtorchTraining.NAMES.get(i), () -> p.grad().data_ptr().address(), p.numel(), DType.FP32));
                }
                replicas.add(Replica.on(devices.get(r)).wrap(grads).build());
            }
            sync.synchronize(replicas); // still where they were wrapped
            for (LibtorchTraining.Model m : models) {
                m.parameters.forEach(p -> kept.add(new Tensor(p.grad())));
                m.optimizer.zero_grad(); // set_to_none: the grads are freed
                m.loss(data[0], data[1]).backward(); // and allocated anew
            }
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> sync.synchronize(replicas));
            assertTrue(e.getMessage().startsWith("replica 0 (jvm:0): gradient 'fc1.weight': its tensor moved"), e.getMessage());
        } finally {
            devices.forEach(Device::close);
        }
    }
}
