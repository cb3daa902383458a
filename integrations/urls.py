from django.urls import path
from rest_framework.routers import SimpleRouter

from integrations.views import IntegrationViewSet, SubmissionDeliveryViewSet, delivery_retry

router = SimpleRouter(trailing_slash=False)
router.register("integrations", IntegrationViewSet, basename="integration")
# A submission's deliveries, under the form's path as the submissions app's own routes.
router.register("forms", SubmissionDeliveryViewSet, basename="form")

urlpatterns = [
    *router.urls,
    path("deliveries/<str:delivery_id>/retry", delivery_retry, name="delivery-retry"),
]
