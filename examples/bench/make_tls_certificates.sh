#!/usr/bin/env bash
# make_tls_certificates.sh DIR: the CA and server certificate the TLS
# benchmarks and example tests use, made with the openssl command (Debian:
# openssl) into DIR: ca.pem, server.pem and server.key (EC P-256, the
# server's certificate for 127.0.0.1, two days), and stranger.pem (a CA that
# signed nothing here). openssl's chatter goes to DIR/openssl.log; exit 1
# with its tail on stderr if it fails.
set -euo pipefail
dir=${1:?usage: make_tls_certificates.sh DIR}
(
  cd "$dir"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key
  openssl req -x509 -new -key ca.key -out ca.pem -subj "/CN=muon test CA" -days 2
  openssl req -x509 -new -key ca.key -out stranger.pem -subj "/CN=another CA" -days 2
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out server.key
  openssl req -new -key server.key -out server.csr -subj /CN=127.0.0.1
  printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem \
    -days 2 -extfile server.ext
) >"$dir/openssl.log" 2>&1 || { tail -n 3 "$dir/openssl.log" >&2; exit 1; }
