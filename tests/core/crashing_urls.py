"""A URLconf with views that fail, to prove errors never leak as HTML."""

from django.urls import include, path
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny


def plain_crash(request):
    raise RuntimeError("secret stack detail")


@api_view(["GET"])
@permission_classes([AllowAny])
def api_crash(request):
    raise RuntimeError("secret stack detail")


urlpatterns = [
    path("api/crash/plain", plain_crash),
    path("api/crash/drf", api_crash),
    path("", include("config.urls")),
]
