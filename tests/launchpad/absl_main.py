"""A Launchpad script under absl's app.run, as Launchpad's examples are:
`absl_main.py RESULT_FILE --lp_launch_type=... [--lp_* flags]`. It prints
the flags absl read and launches the hello world with launch()'s default
launch type, the flag's."""

from absl import app, flags

import launchpad as lp
import programs


def main(argv):
    FLAGS = flags.FLAGS
    print(f"launch type {FLAGS.lp_launch_type}, termination notice "
          f"{FLAGS.lp_termination_notice_secs}, tls {FLAGS.lp_tls}", flush=True)
    controller = lp.launch(programs.hello(argv[1]))
    controller.wait()


if __name__ == "__main__":
    app.run(main)
