"""Strimzi's defaults the platform relies on (the Kafka CRD of Strimzi 1.2.0, schemas/strimzi-1.2.0
040-Crd-kafka.yaml, `clusterCa` and `clientsCa`)."""

from __future__ import annotations

# "The number of days generated certificates should be valid for. The default is 365."
CA_VALIDITY_DAYS = 365
# "The number of days in the certificate renewal period ... before a certificate expires ...
# this will cause the generation of a new certificate. ... Default is 30." A copy of the old CA
# certificate keeps working until it expires, at the end of this period.
CA_RENEWAL_DAYS = 30


# Strimzi's Kafka Exporter (`spec.kafkaExporter`; strimzi-kafka-operator, cluster-operator model
# KafkaExporter.java): one Deployment per Kafka, labelled as the Kafka's own pods
# (`strimzi.io/kind: Kafka`), its metrics on port `tcp-prometheus` (9404), reaching the brokers
# on the replication listener with the cluster CA; it runs danielqsj/kafka_exporter, whose lag
# gauge is this, per `consumergroup`, `topic` and `partition`.
EXPORTER_LAG_METRIC = "kafka_consumergroup_lag"
