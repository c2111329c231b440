"""lint package."""
