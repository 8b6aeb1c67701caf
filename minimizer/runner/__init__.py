"""Running candidate scripts in isolated processes (the process boundary lives here)."""
