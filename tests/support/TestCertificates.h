// Certificates for TLS tests, made with the `openssl` command (Debian:
// openssl) into a temporary directory: a CA, a server certificate for
// localhost and 127.0.0.1, one with another name, an expired one, a client
// certificate for mutual authentication, and an unrelated CA. For tests only.
#pragma once

#include <cstdlib>
#include <fstream>
#include <string>

#include "TempDir.h"

namespace muon {
namespace test {

class TestCertificates {
 public:
  // Makes them all (about a second); ok() says whether it worked, and
  // error() what failed (openssl's own output is in dir/openssl.log).
  TestCertificates() {
    // EC P-256 keys: quick to make. Leaf certificates carry names in
    // subjectAltName, which is what host-name checking reads.
    const std::string script =
        "set -e; cd '" + dir_.path() + "'; exec > openssl.log 2>&1\n"
        "key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1; }\n"
        "ca() { key $1.key; openssl req -x509 -new -key $1.key -out $1.pem -subj \"/CN=$2\" -days 2; }\n"
        "leaf() {  # name key subject-alt-names days\n"
        "  printf 'subjectAltName=%s\\nextendedKeyUsage=serverAuth,clientAuth\\n' \"$3\" > $1.ext\n"
        "  openssl req -new -key $2.key -out $1.csr -subj \"/CN=$1\"\n"
        "  openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $1.pem"
        " -days $4 -extfile $1.ext\n"
        "}\n"
        "ca ca 'muon test CA'; ca other-ca 'muon other CA'\n"
        "key server.key; key client.key\n"
        "leaf server server DNS:localhost,IP:127.0.0.1,IP:::1 2\n"
        "leaf wrongname server DNS:wrong.example 2\n"
        "leaf expired server DNS:localhost,IP:127.0.0.1 -1\n"
        "leaf client client DNS:client.example 2\n";
    {
      std::ofstream out(file("make.sh"));
      out << script;
    }
    const int rc = std::system(("/bin/sh '" + file("make.sh") + "'").c_str());
    if (rc != 0) error_ = "openssl failed (rc " + std::to_string(rc) + "): " + readFile(file("openssl.log"));
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  // A file of the directory: ca.pem, other-ca.pem, server.pem / server.key,
  // wrongname.pem and expired.pem (server.key's), client.pem / client.key.
  std::string file(const std::string& name) const { return dir_.file(name); }

 private:
  TempDir dir_;
  std::string error_;
};

}  // namespace test
}  // namespace muon
