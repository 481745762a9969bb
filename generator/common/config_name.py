"""The name of the config file beside an intent (fabricgen.toml, issue 27).

The CLI reads the file (generator/cli_config.py); `fabricgen plan` names a change to it as a risk
(generator/gitops). The name lives here, below both, so plan need not import the CLI's reader, which
imports the device layer (endpoints and credentials options).
"""

CONFIG_NAME = "fabricgen.toml"
