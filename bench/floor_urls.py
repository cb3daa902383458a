"""A bare Django view that parses a JSON body and inserts one row: what any form backend must
at least do, on the same settings, server and database as FormFlow."""

import json

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt
def floor(request: HttpRequest, slug: str) -> JsonResponse:
    fields = json.loads(request.body)
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO bench_floor (data) VALUES (%s)", [json.dumps(fields)])
    return JsonResponse({"success": True, "message": "stored"})


urlpatterns = [path("api/v1/f/<str:slug>", floor)]
