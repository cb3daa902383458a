from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "pullapi.authentication.ApiKeyAuthentication"
    name = "apiKeyAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "bearerFormat": "ff_live_ API key"}


class HookKeyScheme(ApiKeyScheme):
    """The REST hook endpoints' key (with the ``hooks`` scope); they take a session too."""

    target_class = "pullapi.authentication.KeyOrSessionAuthentication"
    name = "hooksKeyAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "bearerFormat": "ff_live_ API key with the hooks scope"}
