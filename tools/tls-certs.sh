#!/usr/bin/env bash
# tls-certs.sh DIR: makes the PEM files of mutual TLS for a test or a trial job in DIR (never for production: the CA's
# key lies beside the certificates). ca.pem is the CA (HCCL_TLS_CA); rank.pem and rank.key a certificate it signed
# and its PKCS#8 key (HCCL_TLS_CERT, HCCL_TLS_KEY), which every rank may share; rogue.pem and rogue.key are signed by
# another CA (rogue-ca.pem), and expired.pem and expired.key by ca but expired, for tests of what a job refuses.
# EC P-256 keys, valid 2 days.
set -euo pipefail
dir="${1:?usage: tls-certs.sh DIR}"
mkdir -p "$dir"
cd "$dir"
for ca in ca rogue-ca; do
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$ca.key" -out "$ca.pem" -days 2 -subj "/CN=$ca" 2>/dev/null
done
for pair in rank:ca rogue:rogue-ca; do
  leaf="${pair%%:*}"
  ca="${pair##*:}"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$leaf.key" -out "$leaf.csr" -subj "/CN=$leaf" 2>/dev/null
  openssl x509 -req -in "$leaf.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial -out "$leaf.pem" -days 2 \
    2>/dev/null
done
# expired.pem: signed by ca, but its validity ended a day before it began.
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout expired.key -out expired.csr -subj "/CN=expired" 2>/dev/null
openssl x509 -req -in expired.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out expired.pem -days -1 2>/dev/null
