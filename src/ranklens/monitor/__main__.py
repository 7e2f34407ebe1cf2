"""``python -m ranklens.monitor [OPTIONS]`` is ``ranklens serve [OPTIONS]``."""

from ranklens.cli.serve_cmd import command

if __name__ == "__main__":
    command(prog_name="python -m ranklens.monitor")
