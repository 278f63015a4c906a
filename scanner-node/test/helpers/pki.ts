// Test PKI made with the openssl CLI: a root CA, an intermediate, RSA and ECDSA leaves, an
// expired leaf and a self-signed certificate, in a temp directory.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  dir: string;
  caPem: string;
  files: Record<"ca" | "int" | "rsa" | "rsaKey" | "ecdsa" | "ecdsaKey" | "expired" | "expiredKey" | "self" | "selfKey" | "intChain", string>;
}

const ossl = (dir: string, args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });

export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "scanner-pki-"));
  const ext = (name: string, body: string) => { writeFileSync(join(dir, name), body); return name; };
  ext("ca.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n");
  ext("leaf.ext", "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,DNS:scan.test\nauthorityInfoAccess=caIssuers;URI:http://ca.scan.test/int.der,OCSP;URI:http://ocsp.scan.test\n");
  ossl(dir, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "3650", "-subj", "/CN=Scanner Test Root CA/O=Trust-Plane Tests", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
  ossl(dir, ["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "int.key", "-out", "int.csr", "-subj", "/CN=Scanner Test Intermediate/O=Trust-Plane Tests"]);
  ossl(dir, ["x509", "-req", "-in", "int.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "int.pem", "-days", "1825", "-extfile", "ca.ext", "-sha256"]);
  const leaf = (name: string, keyArgs: string[], days: string) => {
    ossl(dir, ["req", "-new", ...keyArgs, "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", "/CN=localhost"]);
    ossl(dir, ["x509", "-req", "-in", `${name}.csr`, "-CA", "int.pem", "-CAkey", "int.key", "-CAcreateserial", "-out", `${name}.pem`, "-days", days, "-extfile", "leaf.ext", "-sha256"]);
  };
  leaf("rsa", ["-newkey", "rsa:2048"], "200");
  leaf("ecdsa", ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"], "80");
  leaf("expired", ["-newkey", "rsa:2048"], "-1");
  ossl(dir, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self.key", "-out", "self.pem", "-days", "30", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]);
  writeFileSync(join(dir, "int-chain.pem"), readFileSync(join(dir, "int.pem")));
  const f = (n: string) => join(dir, n);
  return {
    dir, caPem: readFileSync(f("ca.pem"), "utf8"),
    files: { ca: f("ca.pem"), int: f("int.pem"), rsa: f("rsa.pem"), rsaKey: f("rsa.key"), ecdsa: f("ecdsa.pem"), ecdsaKey: f("ecdsa.key"),
      expired: f("expired.pem"), expiredKey: f("expired.key"), self: f("self.pem"), selfKey: f("self.key"), intChain: f("int-chain.pem") },
  };
}
