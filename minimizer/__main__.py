from minimizer.cli import app

# Guarded: helper processes started with "spawn" import the parent's main module (as __mp_main__).
if __name__ == "__main__":
    app(prog_name="minimizer")
