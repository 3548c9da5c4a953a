"""What Azure Resource Manager accepts as tags.

Sources: MicrosoftDocs/azure-docs `articles/azure-resource-manager/management/tag-resources.md`
at 000024f4, "Limitations" (50 tags per resource; names of 512 characters, 128 on storage
accounts; values of 256; names without `< > % & \\ ? /`; Azure Private DNS zones and their
virtual network links take only 15 tags) and Azure/azure-rest-api-specs
`Microsoft.Resources/resources/stable/2025-04-01/resources.json` at 11f0c127 (`Tags_CreateOrUpdate`:
"Tag names cannot have the following prefixes which are reserved for Azure use: 'microsoft',
'azure', 'windows'").
"""

from __future__ import annotations

MAX_TAGS = 50
# The platform tags private DNS zones and their links too, which take at most 15.
MAX_TAGS_PRIVATE_DNS = 15
MAX_NAME_LENGTH = 512
MAX_NAME_LENGTH_STORAGE_ACCOUNT = 128
MAX_VALUE_LENGTH = 256
FORBIDDEN_NAME_CHARACTERS = "<>%&\\?/"
RESERVED_NAME_PREFIXES = ("microsoft", "azure", "windows")


def tag_problems(name: str, value: str) -> list[str]:
    """Why ARM would refuse this tag on the platform's resources (storage accounts included)."""
    problems = []
    if not name:
        problems.append("a tag name cannot be empty")
    if len(name) > MAX_NAME_LENGTH_STORAGE_ACCOUNT:
        problems.append(f"tag names are at most {MAX_NAME_LENGTH_STORAGE_ACCOUNT} characters on storage accounts")
    bad = sorted({c for c in name if c in FORBIDDEN_NAME_CHARACTERS})
    if bad:
        problems.append(f"tag names cannot contain {' '.join(bad)}")
    if name.lower().startswith(RESERVED_NAME_PREFIXES):
        problems.append(f"tag names starting with {', '.join(RESERVED_NAME_PREFIXES)} are reserved for Azure")
    if len(value) > MAX_VALUE_LENGTH:
        problems.append(f"tag values are at most {MAX_VALUE_LENGTH} characters")
    return problems
