"""inference-stats: the golden PyFlink job (docs/streaming.md).

Kafka in, stateful transform, Kafka out: reads the inference fleet's request logs
(`inference-logs`, JSON with `model` and `latency_ms`), keeps per model a running count and
latency sum in keyed state (RocksDB, checkpointed to the platform's ADLS Gen2 account), and
every `--window-seconds` writes one summary per model to `inference-stats`.

Everything it needs to connect comes from the platform: the Kafka client properties file
named by $KAFKA_PROPERTIES_FILE (bootstrap servers, SASL OAUTHBEARER over TLS with the job's
workload identity, its consumer group), and the checkpoint settings in its FlinkDeployment.
No secret is read or written here.
"""

from __future__ import annotations

import argparse
import json
import os

from pyflink.common import Types, WatermarkStrategy
from pyflink.common.serialization import SimpleStringSchema
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.connectors.base import DeliveryGuarantee
from pyflink.datastream.connectors.kafka import (
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
)
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor

# The platform mounts the job's Kafka client properties and names them here (planning/streaming.py).
PROPERTIES_ENV = "KAFKA_PROPERTIES_FILE"


def kafka_properties() -> dict[str, str]:
    with open(os.environ[PROPERTIES_ENV], encoding="utf-8") as handle:
        pairs = (line.split("=", 1) for line in handle if "=" in line and not line.startswith("#"))
        return {key.strip(): value.strip() for key, value in pairs}


class ModelStats(KeyedProcessFunction):
    """Per model: requests and total latency since the last summary, in keyed state."""

    def __init__(self, window_ms: int):
        self.window_ms = window_ms

    def open(self, runtime_context: RuntimeContext):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
        self.latency = runtime_context.get_state(ValueStateDescriptor("latency_ms", Types.DOUBLE()))
        self.timer = runtime_context.get_state(ValueStateDescriptor("timer", Types.LONG()))

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        record = json.loads(value)
        self.count.update((self.count.value() or 0) + 1)
        self.latency.update((self.latency.value() or 0.0) + float(record.get("latency_ms", 0.0)))
        if self.timer.value() is None:
            fire = ctx.timer_service().current_processing_time() + self.window_ms
            ctx.timer_service().register_processing_time_timer(fire)
            self.timer.update(fire)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext):
        count = self.count.value() or 0
        if count:
            yield json.dumps(
                {
                    "model": ctx.get_current_key(),
                    "window_end_ms": timestamp,
                    "requests": count,
                    "mean_latency_ms": (self.latency.value() or 0.0) / count,
                }
            )
        self.count.clear()
        self.latency.clear()
        self.timer.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default="inference-logs")
    parser.add_argument("--output", default="inference-stats")
    parser.add_argument("--window-seconds", type=int, default=60)
    args = parser.parse_args()
    properties = kafka_properties()
    servers = properties.pop("bootstrap.servers")
    group = properties.pop("group.id")

    env = StreamExecutionEnvironment.get_execution_environment()
    source = (
        KafkaSource.builder()
        .set_bootstrap_servers(servers)
        .set_topics(args.input)
        .set_group_id(group)
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
        .set_value_only_deserializer(SimpleStringSchema())
        .set_properties(properties)
        .build()
    )
    sink_builder = (
        KafkaSink.builder()
        .set_bootstrap_servers(servers)
        .set_record_serializer(
            KafkaRecordSerializationSchema.builder()
            .set_topic(args.output)
            .set_value_serialization_schema(SimpleStringSchema())
            .build()
        )
        # At least once: exactly once needs Kafka transactions (transactional-id ACLs), which the
        # platform's client ACLs do not grant.
        .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE)
    )
    for key, value in properties.items():
        sink_builder = sink_builder.set_property(key, value)
    (
        env.from_source(source, WatermarkStrategy.no_watermarks(), "inference-logs")
        .key_by(lambda value: json.loads(value).get("model", "unknown"), key_type=Types.STRING())
        .process(ModelStats(args.window_seconds * 1000), output_type=Types.STRING())
        .sink_to(sink_builder.build())
    )
    env.execute("inference-stats")


if __name__ == "__main__":
    main()
