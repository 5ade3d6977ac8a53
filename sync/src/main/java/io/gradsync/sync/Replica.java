package io.gradsync.sync;

import io.gradsync.tasks.device.Device;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** One model replica's gradients, all on one device, in registration order. */
public record Replica(Device device, List<Gradient> gradients) {

    public Replica {
        Objects.requireNonNull(device, "replica device");
        gradients = List.copyOf(Objects.requireNonNull(gradients, "replica gradients"));
    }

    public static Builder on(Device device) {
        return new Builder(device);
    }

    /** Collects gradients for one device. */
    public static final class Builder {
        private final Device device;
        private final List<Gradient> gradients = new ArrayList<>();

        private Builder(Device device) {
            this.device = device;
        }

        public Builder add(Gradient gradient) {
            gradients.add(gradient);
            return this;
        }

        public Builder add(String name, io.gradsync.tasks.device.DeviceBuffer buffer, DType dtype) {
            return add(Gradient.of(name, buffer, dtype));
        }

        public Replica build() {
            return new Replica(device, gradients);
        }
    }
}
