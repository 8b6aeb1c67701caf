from minimizer.cli import app

app(prog_name="minimizer")
