"""A module that cannot be imported: its Python node cannot start."""

import a_package_that_is_not_installed  # noqa: F401
