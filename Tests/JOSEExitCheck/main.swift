// Signs and verifies on several threads and calls `exit` while they are busy, the way the server and the test runner
// may end with a thread still inside OpenSSL. `JOSETests.ExitWhileBusy` runs it and expects a clean exit status.
import Foundation
import JOSE

let threads = 4
let rsa = try RSAPrivateKey.generate()
let message = Array("exit while busy".utf8)
let signature = try rsa.signRS256(message)

for _ in 0..<threads {
    Thread {
        while true {
            guard rsa.publicKey.verifyRS256(signature: signature, message: message),
                  let ec = try? ECPrivateKey.generate(),
                  let es256 = try? ec.signES256(message),
                  ec.publicKey.verifyES256(signature: es256, message: message)
            else { fatalError("a signature did not verify") }
        }
    }.start()
}
usleep(20_000)
exit(0)
